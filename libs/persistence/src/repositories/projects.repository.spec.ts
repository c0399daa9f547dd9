import { CredentialsCipher } from '../credentials-cipher';
import { CredentialsUndecryptableError, EncryptionKeyMissingError } from '../errors';
import { createTestDatabase, type TestDatabase } from '../testing';
import { LearnedWindowsRepository } from './learned-windows.repository';
import { ProjectsRepository } from './projects.repository';
import { UsageRepository } from './usage.repository';

const KEY = 'c'.repeat(64);
const PLANTED = 'sk-planted-4f9a0c1e7b';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe(ProjectsRepository.name, () => {
  let db: TestDatabase;
  let projects: ProjectsRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(KEY));
  });
  afterAll(() => db.drop());

  describe('create', () => {
    it('stores the name and applies the defaults', async () => {
      const project = await projects.create({ name: 'Docs' });
      expect({ ...project, id: undefined, createdAt: undefined, updatedAt: undefined }).toEqual({
        id: undefined,
        name: 'Docs',
        embeddingSettings: null,
        llmSettings: null,
        retrievalSettings: null,
        textSearchConfig: 'simple',
        memorySettings: null,
        topK: 8,
        maxTokens: 2048,
        systemPrompt: null,
        maxHistoryMessages: null,
        hasCredentials: false,
        createdAt: undefined,
        updatedAt: undefined,
      });
      expect(project.createdAt).toBeInstanceOf(Date);
    });

    it('stores given settings', async () => {
      const project = await projects.create({
        name: 'Configured',
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
        llmSettings: { provider: 'local', model: 'local-extractive' } as never,
        topK: 4,
        maxTokens: 512,
        systemPrompt: 'Be brief.',
        maxHistoryMessages: 10,
      });
      expect(await projects.findById(project.id)).toMatchObject({
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
        llmSettings: { provider: 'local', model: 'local-extractive' },
        topK: 4,
        maxTokens: 512,
        systemPrompt: 'Be brief.',
        maxHistoryMessages: 10,
      });
    });

    it('rejects a top-K below 1', async () => {
      await expect(projects.create({ name: 'bad', topK: 0 })).rejects.toThrow(/projects_top_k_check/);
    });
  });

  describe('findById', () => {
    it('returns null for an unknown id and for a non-UUID', async () => {
      expect(await projects.findById(UNKNOWN_ID)).toBeNull();
      expect(await projects.findById('../etc/passwd')).toBeNull();
    });
  });

  describe('findWithCredentials', () => {
    it('returns the same project as findById and list, with its credentials decrypted', async () => {
      const created = await projects.create({
        name: 'With key',
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
        retrievalSettings: { method: 'hybrid', vectorWeight: 2 },
        systemPrompt: 'Be brief.',
        maxHistoryMessages: 6,
      });
      await projects.setCredentials(created.id, { apiKey: PLANTED });
      const found = await projects.findWithCredentials(created.id);
      const byId = await projects.findById(created.id);
      const listed = (await projects.list()).find((p) => p.id === created.id);
      expect(found).toEqual({ project: byId, credentials: { apiKey: PLANTED } });
      expect(byId).toEqual(listed);
      expect(byId).toMatchObject({
        name: 'With key',
        retrievalSettings: { method: 'hybrid', vectorWeight: 2 },
        topK: 8,
        maxHistoryMessages: 6,
        hasCredentials: true,
      });
      expect(byId?.updatedAt).toBeInstanceOf(Date);
    });

    it('returns credentials null for a project without, and null for an unknown id or a non-UUID', async () => {
      const created = await projects.create({ name: 'No key' });
      expect(await projects.findWithCredentials(created.id)).toEqual({
        project: await projects.findById(created.id),
        credentials: null,
      });
      expect(await projects.findWithCredentials(UNKNOWN_ID)).toBeNull();
      expect(await projects.findWithCredentials('not-a-uuid')).toBeNull();
    });
  });

  describe('findForSynthesis', () => {
    const floor = 'approx:script-v1-floor';
    it('reads the project, its remembered windows and its model calibration records (its own, and every project’s) as the separate reads do', async () => {
      const project = await projects.create({
        name: 'Synth',
        llmSettings: { provider: 'openai', model: 'gpt-x', baseUrl: 'http://127.0.0.1:9/v1' } as never,
      });
      const other = await projects.create({ name: 'Other tenant' });
      await projects.setCredentials(project.id, { apiKey: PLANTED });
      const windows = new LearnedWindowsRepository(db.dataSource);
      await windows.remember(project.id, 'openai', 'gpt-x', 6000);
      await windows.remember(project.id, 'openai', 'gpt-old', 4000);
      const usage = new UsageRepository(db.dataSource);
      for (const [script, reported] of [
        ['latin', 110],
        ['latin', 120],
        ['latin', 130],
        ['cjk', 200],
        [null, 90],
      ] as Array<[string | null, number]>)
        await usage.record({
          model: 'gpt-x',
          counterId: floor,
          estimated: 100,
          reported,
          script,
          projectId: project.id,
          masses: script ? { [script]: [97, 130] } : null,
        });
      // Another tenant's asks on the same model id: newer, but never among this project's records.
      for (const reported of [300, 310, 320])
        await usage.record({
          model: 'gpt-x',
          counterId: floor,
          estimated: 100,
          reported,
          script: 'latin',
          projectId: other.id,
        });
      await usage.record({ model: 'gpt-other', counterId: floor, estimated: 100, reported: 500, script: 'latin' });
      await usage.record({ model: 'gpt-x', counterId: 'tiktoken:o200k_base', estimated: 100, reported: 500 });

      const found = await projects.findForSynthesis(project.id, { counterId: floor, perScript: 2 });
      expect(found?.project).toEqual(await projects.findById(project.id));
      expect(found?.windows).toEqual(await windows.list(project.id));
      expect(found?.calibration).toEqual(await usage.recentPerScript('gpt-x', floor, 2, project.id));
      expect(found?.calibration.map((r) => [r.script, r.reported, r.masses])).toEqual([
        ['cjk', 200, { cjk: [97, 130] }],
        ['latin', 130, { latin: [97, 130] }],
        ['latin', 120, { latin: [97, 130] }],
        [null, 90, null],
      ]);
      expect(found?.calibrationPrior).toEqual(await usage.recentPerScript('gpt-x', floor, 2));
      expect(found?.calibrationPrior.map((r) => [r.script, r.reported])).toEqual([
        ['cjk', 200],
        ['latin', 320],
        ['latin', 310],
        [null, 90],
      ]);
      expect(found?.credentials()).toEqual({ apiKey: PLANTED });
    });

    it('a project without LLM settings or remembered windows: empty lists; no such project: null', async () => {
      const project = await projects.create({ name: 'Bare' });
      const found = await projects.findForSynthesis(project.id, { counterId: floor, perScript: 2 });
      expect({ windows: found?.windows, calibration: found?.calibration, credentials: found?.credentials() }).toEqual({
        windows: [],
        calibration: [],
        credentials: null,
      });
      expect(await projects.findForSynthesis(UNKNOWN_ID, { counterId: floor, perScript: 2 })).toBeNull();
      expect(await projects.findForSynthesis('not-a-uuid', { counterId: floor, perScript: 2 })).toBeNull();
    });
  });

  describe('updateSettings', () => {
    it('changes only the given fields, and null clears', async () => {
      const project = await projects.create({ name: 'P', systemPrompt: 'x', topK: 3 });
      const updated = await projects.updateSettings(project.id, { maxTokens: 1000, systemPrompt: null });
      expect(updated).toMatchObject({ name: 'P', topK: 3, maxTokens: 1000, systemPrompt: null });
    });

    it('returns null for an unknown project', async () => {
      expect(await projects.updateSettings(UNKNOWN_ID, { topK: 2 })).toBeNull();
    });
  });

  describe('setCredentials / getCredentials', () => {
    it('stores credentials encrypted: the raw column never holds the plaintext', async () => {
      const project = await projects.create({ name: 'Secret' });
      expect(await projects.setCredentials(project.id, { apiKey: PLANTED })).toBe(true);
      const [raw] = await db.dataSource.query(
        'SELECT credentials_encrypted, row_to_json(p)::text AS whole FROM projects p WHERE id = $1',
        [project.id],
      );
      expect(Buffer.isBuffer(raw.credentials_encrypted)).toBe(true);
      expect(raw.credentials_encrypted.includes(Buffer.from(PLANTED))).toBe(false);
      expect(raw.whole).not.toContain(PLANTED);
      expect(await projects.getCredentials(project.id)).toEqual({ apiKey: PLANTED });
    });

    it('never puts credentials in the public shape', async () => {
      const project = await projects.create({ name: 'Shape' });
      await projects.setCredentials(project.id, { apiKey: PLANTED });
      const found = await projects.findById(project.id);
      expect(found?.hasCredentials).toBe(true);
      expect(JSON.stringify(found)).not.toContain(PLANTED);
      expect(Object.keys(found ?? {})).not.toContain('credentialsEncrypted');
    });

    it('null removes them', async () => {
      const project = await projects.create({ name: 'Clear' });
      await projects.setCredentials(project.id, { apiKey: PLANTED });
      await projects.setCredentials(project.id, null);
      expect(await projects.getCredentials(project.id)).toBeNull();
      expect((await projects.findById(project.id))?.hasCredentials).toBe(false);
    });

    it('throws a clear error when a credential is stored without ASK_ENCRYPTION_KEY', async () => {
      const keyless = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
      const project = await keyless.create({ name: 'Keyless' });
      await expect(keyless.setCredentials(project.id, { apiKey: PLANTED })).rejects.toThrow(EncryptionKeyMissingError);
      expect(await keyless.getCredentials(project.id)).toBeNull();
    });

    it('refuses to decrypt with another key or after the value is copied to another project', async () => {
      const a = await projects.create({ name: 'A' });
      const b = await projects.create({ name: 'B' });
      await projects.setCredentials(a.id, { apiKey: PLANTED });
      await expect(
        new ProjectsRepository(db.dataSource, new CredentialsCipher('d'.repeat(64))).getCredentials(a.id),
      ).rejects.toThrow(CredentialsUndecryptableError);
      await db.dataSource.query(
        'UPDATE projects SET credentials_encrypted = (SELECT credentials_encrypted FROM projects WHERE id = $1) WHERE id = $2',
        [a.id, b.id],
      );
      await expect(projects.getCredentials(b.id)).rejects.toThrow(CredentialsUndecryptableError);
    });

    it('returns false for an unknown project', async () => {
      expect(await projects.setCredentials(UNKNOWN_ID, { apiKey: 'x' })).toBe(false);
    });
  });

  describe('delete', () => {
    it('deletes the project once', async () => {
      const project = await projects.create({ name: 'Gone' });
      expect(await projects.delete(project.id)).toBe(true);
      expect(await projects.delete(project.id)).toBe(false);
      expect(await projects.findById(project.id)).toBeNull();
    });
  });
});
