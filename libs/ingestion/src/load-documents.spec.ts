import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DocumentLoadError, loadDocuments } from './load-documents';

/** The committed excerpts of the real data sets (sources and licences: fixtures/data/README.md). */
const DATA = resolve(__dirname, '..', '..', '..', 'fixtures', 'data');

describe('load-documents', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ask-load-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const expectError = async (promise: Promise<unknown>, code: string, message: RegExp) => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DocumentLoadError);
    expect((error as DocumentLoadError).code).toBe(code);
    expect((error as DocumentLoadError).message).toMatch(message);
  };

  describe(loadDocuments.name, () => {
    it('loads the pgvector KB: 4 files in path order, titled by their first heading or file name', async () => {
      const docs = await loadDocuments(`${DATA}/kb-pgvector`);
      expect(docs.map((d) => [d.uri, d.title, d.text.length])).toEqual([
        ['kb-pgvector/CHANGELOG.md', '0.8.7 (unreleased)', 7340],
        ['kb-pgvector/LICENSE.txt', 'LICENSE.txt', 1104],
        ['kb-pgvector/README.md', 'pgvector', 42227],
        ['kb-pgvector/SOURCE.txt', 'SOURCE.txt', 417],
      ]);
    });

    // The fixture is the manual's first 72 JSONL lines (acronyms … bookindex). 73 = 71 pages other than
    // bookindex + 2 text files, counted independently of the loader (a line count of the JSONL by id, and
    // the folder's .txt files).
    it('loads the PostgreSQL manual excerpt: 71 JSONL pages (bookindex skipped) plus its 2 text files', async () => {
      const docs = await loadDocuments(`${DATA}/kb-postgresql-15-docs`);
      expect(docs).toHaveLength(73);
      expect(docs.find((d) => d.uri.includes('bookindex'))).toBeUndefined();
      expect(docs.find((d) => d.uri === '/usr/share/doc/postgresql-doc-15/html/acronyms.html')?.title).toBe(
        'Appendix L. Acronyms',
      );
      expect(new Set(docs.map((d) => d.uri)).size).toBe(73);
    });

    it('reads JSONL fields, recurses into folders, ignores other files and dot-entries', async () => {
      await mkdir(join(dir, 'sub'));
      await mkdir(join(dir, '.hidden'));
      await writeFile(
        join(dir, 'sub', 'notes.jsonl'),
        '{"id":"a","title":"Alpha","text":"first"}\n\n{"text":"no id"}\n{"id":7,"source_path":"https://x/y","text":"z"}\n',
      );
      await writeFile(join(dir, 'image.png'), 'not text');
      await writeFile(join(dir, '.hidden', 'secret.md'), '# no');
      await writeFile(join(dir, 'empty.txt'), '   \n');
      const docs = await loadDocuments(dir);
      const name = dir.split('/').pop();
      expect(docs).toEqual([
        { uri: `${name}/sub/notes.jsonl#a`, title: 'Alpha', text: 'first' },
        { uri: `${name}/sub/notes.jsonl#line-3`, title: 'notes.jsonl:3', text: 'no id' },
        { uri: 'https://x/y', title: '7', text: 'z' },
      ]);
    });

    it('normalises CRLF and a BOM, and keeps duplicate uris apart', async () => {
      await writeFile(
        join(dir, 'd.jsonl'),
        '{"source_path":"same","text":"one"}\n{"source_path":"same","text":"two"}\n',
      );
      await writeFile(join(dir, 'w.md'), '\uFEFF# Title\r\nline\r\n');
      const docs = await loadDocuments(dir);
      expect(docs.map((d) => [d.uri.replace(/^[^/]+\//, ''), d.title, d.text])).toEqual([
        ['same', 'd.jsonl:1', 'one'],
        ['same#2', 'd.jsonl:2', 'two'],
        ['w.md', 'Title', '# Title\nline\n'],
      ]);
    });

    it('throws not_a_directory for a file and unreadable for a missing folder', async () => {
      await writeFile(join(dir, 'f.md'), 'x');
      await expectError(loadDocuments(join(dir, 'f.md')), 'not_a_directory', /not a directory/);
      await expectError(loadDocuments(join(dir, 'missing')), 'unreadable', /ENOENT/);
    });

    it('throws too_large for a file over maxFileBytes and a document over maxDocumentChars', async () => {
      await writeFile(join(dir, 'big.txt'), 'x'.repeat(2000));
      await expectError(loadDocuments(dir, { maxFileBytes: 1000 }), 'too_large', /file of 2000 bytes exceeds 1000/);
      await expectError(
        loadDocuments(dir, { maxDocumentChars: 1500 }),
        'too_large',
        /document of 2000 characters exceeds 1500/,
      );
    });

    it('throws invalid_jsonl naming the line', async () => {
      await writeFile(join(dir, 'bad.jsonl'), '{"text":"ok"}\n{"title":"no text"}\n');
      await expectError(loadDocuments(dir), 'invalid_jsonl', /bad\.jsonl:2: field "text" must be a string/);
      await writeFile(join(dir, 'bad.jsonl'), '{"text":"ok"}\nnot json\n');
      await expectError(loadDocuments(dir), 'invalid_jsonl', /bad\.jsonl:2: not JSON/);
    });

    it('throws unreadable for invalid UTF-8', async () => {
      await writeFile(join(dir, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      await expectError(loadDocuments(dir), 'unreadable', /not valid UTF-8/);
    });

    it('titles a Markdown file by its own first heading of any level, a text file by its name', async () => {
      await writeFile(join(dir, 'guards.md'), '```ts\n# not a title\n```\n### Guards\n\ntext');
      await writeFile(join(dir, 'notes.txt'), '# not Markdown\n');
      await writeFile(join(dir, 'plain.md'), 'no heading here');
      const docs = await loadDocuments(dir);
      expect(docs.map((d) => [d.uri.replace(/^[^/]+\//, ''), d.title])).toEqual([
        ['guards.md', 'Guards'],
        ['notes.txt', 'notes.txt'],
        ['plain.md', 'plain.md'],
      ]);
    });

    it('skips nested node_modules and files matched by skipFile; sourceName names the uris', async () => {
      await mkdir(join(dir, 'node_modules', 'tslib'), { recursive: true });
      await mkdir(join(dir, 'docs'));
      await writeFile(join(dir, 'node_modules', 'tslib', 'README.md'), '# tslib');
      await writeFile(join(dir, 'README.md'), '# Own');
      await writeFile(join(dir, 'LICENSE.md'), 'MIT');
      await writeFile(join(dir, 'docs', 'guide.md'), '# Guide');
      const docs = await loadDocuments(dir, {
        sourceName: '@nestjs/bullmq',
        skipFile: (path) => path.startsWith('LICENSE'),
      });
      expect(docs.map((d) => [d.uri, d.title])).toEqual([
        ['@nestjs/bullmq/README.md', 'Own'],
        ['@nestjs/bullmq/docs/guide.md', 'Guide'],
      ]);
    });
  });
});
