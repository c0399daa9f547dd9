import { createHash } from 'node:crypto';
import { CredentialsCipher } from '../credentials-cipher';
import { createTestDatabase, type TestDatabase } from '../testing';
import { ApiKeysRepository } from './api-keys.repository';
import { ProjectsRepository } from './projects.repository';

describe(ApiKeysRepository.name, () => {
  let db: TestDatabase;
  let keys: ApiKeysRepository;
  let projectA: string;
  let projectB: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    keys = new ApiKeysRepository(db.dataSource);
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectA = (await projects.create({ name: 'A' })).id;
    projectB = (await projects.create({ name: 'B' })).id;
  });
  afterAll(() => db.drop());

  describe('verifyKey and isActive', () => {
    it("give the key's row id with its project, and report a revoked key inactive", async () => {
      const created = await keys.create(projectA, 'stream');
      expect(await keys.verifyKey(created.key)).toEqual({ projectId: projectA, keyId: created.id });
      expect(await keys.isActive(created.id)).toBe(true);
      await keys.revoke(projectA, created.id);
      expect([await keys.verifyKey(created.key), await keys.isActive(created.id)]).toEqual([null, false]);
      expect(await keys.isActive('not-a-uuid')).toBe(false);
    });
  });

  describe('create', () => {
    it('returns a key of the form ask_<12>_<43> whose prefix is stored', async () => {
      const created = await keys.create(projectA, 'ci');
      expect(created.key).toMatch(/^ask_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
      expect(created.key.startsWith(`ask_${created.prefix}_`)).toBe(true);
      expect(await keys.list(projectA)).toContainEqual(
        expect.objectContaining({ id: created.id, prefix: created.prefix, name: 'ci', revokedAt: null }),
      );
    });

    it('stores only the SHA-256 of the key, never the key or its secret', async () => {
      const created = await keys.create(projectA);
      const [row] = await db.dataSource.query(
        'SELECT row_to_json(k)::text AS whole, key_hash FROM api_keys k WHERE id = $1',
        [created.id],
      );
      const secret = created.key.slice(4 + 12 + 1);
      expect(row.whole).not.toContain(secret);
      expect(row.key_hash.equals(createHash('sha256').update(created.key).digest())).toBe(true);
    });
  });

  describe('verify', () => {
    it('returns the project of a valid key', async () => {
      const a = await keys.create(projectA);
      const b = await keys.create(projectB);
      expect(await keys.verify(a.key)).toBe(projectA);
      expect(await keys.verify(b.key)).toBe(projectB);
    });

    it('returns null for a wrong secret with a real prefix, a malformed key, and an unknown prefix', async () => {
      const a = await keys.create(projectA);
      const tampered = a.key.slice(0, -1) + (a.key.endsWith('A') ? 'B' : 'A');
      expect(await keys.verify(tampered)).toBeNull();
      expect(await keys.verify('Bearer nonsense')).toBeNull();
      expect(await keys.verify(`ask_${'x'.repeat(12)}_${'y'.repeat(43)}`)).toBeNull();
    });

    it('returns null once the key is revoked', async () => {
      const a = await keys.create(projectA);
      expect(await keys.revoke(projectA, a.id)).toBe(true);
      expect(await keys.verify(a.key)).toBeNull();
    });
  });

  describe('revoke', () => {
    it("cannot revoke another project's key", async () => {
      const a = await keys.create(projectA);
      expect(await keys.revoke(projectB, a.id)).toBe(false);
      expect(await keys.verify(a.key)).toBe(projectA);
    });

    it('keeps the first revocation time', async () => {
      const a = await keys.create(projectA);
      await keys.revoke(projectA, a.id);
      const first = (await keys.list(projectA)).find((k) => k.id === a.id)?.revokedAt;
      await keys.revoke(projectA, a.id);
      expect((await keys.list(projectA)).find((k) => k.id === a.id)?.revokedAt).toEqual(first);
    });
  });
});
