import { join } from 'node:path';
import { CredentialsCipher, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { loadDocuments } from '@ask/ingestion';
import {
  checkDemoInputs,
  chooseCorpus,
  demoProject,
  demoProjectName,
  FALLBACK_PACKAGES,
  NOT_DOCUMENTATION,
  prepareDocument,
  readableReadme,
  withoutLicenceSections,
  SEMANTIC_SUBSET,
} from './demo.command';

describe('the fallback corpus', () => {
  it.each([
    ['LICENSE', true],
    ['LICENSE.md', true],
    ['license-MIT.txt', true],
    ['SECURITY.md', true],
    ['CHANGELOG.md', true],
    ['docs/CHANGES.md', true],
    ['CODE_OF_CONDUCT.md', true],
    ['README.md', false],
    ['Readme.md', false],
    ['docs/licensing-guide.md', false],
  ])('NOT_DOCUMENTATION matches %s: %s', (path, skipped) => {
    expect(NOT_DOCUMENTATION.test(path)).toBe(skipped);
  });

  it('is one README per package, each under its package name: no two sources share a uri', async () => {
    const { folders } = chooseCorpus(undefined, { fallback: true });
    expect(folders.map((f) => f.sourceName)).toEqual(FALLBACK_PACKAGES);
    const uris: string[] = [];
    for (const folder of folders) {
      for (const doc of await loadDocuments(folder.dir, {
        sourceName: folder.sourceName,
        skipFile: (p) => NOT_DOCUMENTATION.test(p),
      })) {
        uris.push(prepareDocument(folder, doc).uri);
      }
    }
    expect(uris.map((u) => u.toLowerCase())).toEqual(FALLBACK_PACKAGES.map((p) => `${p}/readme.md`));
  });

  it('titles a package README "<package> README" and removes its logos, badges and link targets, keeping code', () => {
    const text = [
      '<div align="center"><img src="logo.png" width="800" /><p>The fastest queue.</p></div>',
      '[![npm](https://img.shields.io/npm/v/x.svg)](https://npm.im/x) Read the [documentation](https://docs.x.io).',
      '',
      '',
      '',
      '# The gist',
      '```ts',
      'const ok: Promise<boolean> = check(); // <b>kept</b>',
      '```',
      '[1]: https://example.com/ref',
    ].join('\n');
    expect(readableReadme(text)).toBe(
      [
        'The fastest queue.',
        ' Read the documentation.',
        '',
        '# The gist',
        '```ts',
        'const ok: Promise<boolean> = check(); // <b>kept</b>',
        '```',
      ].join('\n'),
    );
    const folder = { dir: '/x', sourceName: '@nestjs/bullmq', title: '@nestjs/bullmq README' };
    expect(
      prepareDocument(folder, {
        uri: '@nestjs/bullmq/README.md',
        title: 'Description',
        text: '## Description\n<p>Hi</p>',
      }),
    ).toEqual({
      uri: '@nestjs/bullmq/README.md',
      title: '@nestjs/bullmq README',
      text: '## Description\nHi',
    });
    expect(prepareDocument(folder, { uri: '@nestjs/bullmq/docs/a.md', title: 'A', text: '<p>x</p>' }).text).toBe(
      '<p>x</p>',
    );
  });
});

describe(withoutLicenceSections.name, () => {
  it('drops each License/Licence section up to the next heading of its level or higher, not headings in code', () => {
    const text = [
      '# pkg',
      'Intro.',
      '## License',
      'Permission is hereby granted, free of charge…',
      '### MIT terms',
      'THE SOFTWARE IS PROVIDED "AS IS"…',
      '## Usage',
      '```md',
      '## License',
      '```',
      '## Licence and copyright',
      '(c) someone',
      '# Appendix',
      'Kept.',
      '## Licensing questions are not a licence heading',
      'Kept too.',
    ].join('\n');
    expect(withoutLicenceSections(text)).toBe(
      [
        '# pkg',
        'Intro.',
        '## Usage',
        '```md',
        '## License',
        '```',
        '# Appendix',
        'Kept.',
        '## Licensing questions are not a licence heading',
        'Kept too.',
      ].join('\n'),
    );
  });
});

describe(demoProject.name, () => {
  let db: TestDatabase;
  let projects: ProjectsRepository;
  beforeAll(async () => {
    db = await createTestDatabase();
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
  });
  afterAll(() => db?.drop());

  it('creates the project on the local providers, reuses it, and resets it when its providers were switched', async () => {
    const log: string[] = [];
    const id = await demoProject(db.dataSource, projects, 'demo: test', (l) => log.push(l));
    expect(await demoProject(db.dataSource, projects, 'demo: test', (l) => log.push(l))).toBe(id);
    await projects.updateSettings(id, {
      llmSettings: { provider: 'openai', model: 'gpt-4o' },
      embeddingSettings: { provider: 'openai', model: 'text-embedding-3-small', dimensions: 1536 },
    });
    expect(await demoProject(db.dataSource, projects, 'demo: test', (l) => log.push(l))).toBe(id);
    expect(log).toEqual([
      `project: created "demo: test" (${id}) on the embedded local providers`,
      `project: reusing "demo: test" (${id})`,
      'project "demo: test" had LLM openai/gpt-4o and embeddings openai/text-embedding-3-small; reset to the embedded local providers ' +
        '(the demo runs with no credentials; switch providers on a project of your own: npm run ask -- project create --name mine)',
      `project: reusing "demo: test" (${id})`,
    ]);
    const project = await projects.findById(id);
    expect([project?.llmSettings, project?.embeddingSettings, project?.topK]).toEqual([
      { provider: 'local', model: 'local' },
      { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      12,
    ]);
  });

  it('creates the --semantic project on local-semantic (use-lite-512, 512 dimensions)', async () => {
    const id = await demoProject(db.dataSource, projects, 'demo: semantic test', () => undefined, 'local-semantic');
    expect((await projects.findById(id))?.embeddingSettings).toEqual({
      provider: 'local-semantic',
      model: 'use-lite-512',
      dimensions: 512,
    });
  });
});

describe('SEMANTIC_SUBSET', () => {
  it("selects the pages of the session's chapters and no others", () => {
    const ids = [
      'indexes-partial',
      'routine-vacuuming',
      'mvcc-intro',
      'transaction-iso',
      'using-explain',
      'warm-standby',
      'wal-intro',
      'continuous-archiving',
      'sql-copy',
      'pgcrypto',
      'datatype-numeric',
    ];
    expect(ids.filter((id) => SEMANTIC_SUBSET.test(id))).toEqual(ids.slice(0, 8));
  });
});

/** A path in the repository, whatever jest's working folder. */
const at = (path: string) => join(__dirname, '..', '..', '..', '..', path);

describe(checkDemoInputs.name, () => {
  it('accepts an existing folder and a question file', () => {
    expect(() =>
      checkDemoInputs({
        docs: at('fixtures/data/kb-pgvector'),
        questions: at('apps/ask-cli/questions/pgvector-session.txt'),
      }),
    ).not.toThrow();
  });

  it.each([
    [
      { docs: 'no/such/folder' },
      /^--docs no\/such\/folder: no such folder \(.*no\/such\/folder\); nothing was created$/,
    ],
    [{ docs: at('package.json') }, /^--docs .*package.json: not a folder/],
    [{ questions: 'no-such-file.txt' }, /^--questions no-such-file.txt: no such file/],
    [{ questions: at('fixtures') }, /^--questions .*fixtures: no such file/],
  ])('refuses %o before anything is created', (flags, message) => {
    expect(() => checkDemoInputs(flags)).toThrow(message);
  });
});

describe(demoProjectName.name, () => {
  it.each([
    [chooseCorpus(at('fixtures/data/kb-pgvector')), {}, 'demo: kb-pgvector'],
    [
      { short: 'PostgreSQL 15 manual' },
      { semantic: true, subset: true },
      'demo: PostgreSQL 15 manual (semantic subset)',
    ],
    [{ short: 'kb-pgvector' }, { semantic: true }, 'demo: kb-pgvector (semantic)'],
  ])('names the project after a short name of its corpus', (corpus, options, name) => {
    expect(demoProjectName(corpus, options)).toBe(name);
  });
});
