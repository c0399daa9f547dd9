import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '../ids';
import { pgQuery } from '../pg-query';

/** A newly created key: `key` is the plaintext, shown once and never stored. */
export interface CreatedApiKey {
  id: string;
  projectId: string;
  /** The public lookup part, also the start of `key` after `ask_`. */
  prefix: string;
  /** `ask_<prefix>_<secret>`: 12 + 43 base64url characters (72 + 256 random bits). */
  key: string;
  createdAt: Date;
}

/** A stored key's metadata (no secret). */
export interface ApiKeyInfo {
  id: string;
  projectId: string;
  prefix: string;
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

const KEY_PATTERN = /^ask_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/;

/**
 * Per-project API keys, stored as SHA-256 hashes. A key is `ask_<prefix>_<secret>`; the prefix
 * finds the row, the hash of the whole key authenticates it (constant-time compare). SHA-256 rather
 * than a slow KDF because the secret is 256 random bits: there is no dictionary to slow down.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Creates a key for the project and returns its plaintext, the only time it is available.
   * @throws QueryFailedError (FK) when the project does not exist.
   */
  async create(projectId: string, name: string | null = null): Promise<CreatedApiKey> {
    const prefix = randomBytes(9).toString('base64url');
    const key = `ask_${prefix}_${randomBytes(32).toString('base64url')}`;
    const rows = await this.dataSource.query(
      'INSERT INTO api_keys (project_id, prefix, key_hash, name) VALUES ($1, $2, $3, $4) RETURNING id, created_at',
      [projectId, prefix, sha256(key), name],
    );
    return { id: rows[0].id, projectId, prefix, key, createdAt: rows[0].created_at };
  }

  /**
   * The project id the key belongs to, or null when the key is malformed, unknown, revoked, or its
   * project is gone.
   */
  async verify(plaintext: string): Promise<string | null> {
    return (await this.verifyKey(plaintext))?.projectId ?? null;
  }

  /**
   * {@link verify} with the key's row id: `{ projectId, keyId }`, or null when the key is malformed,
   * unknown, revoked, or its project is gone.
   */
  async verifyKey(plaintext: string): Promise<{ projectId: string; keyId: string } | null> {
    const match = KEY_PATTERN.exec(plaintext);
    if (!match) return null;
    // Every authenticated request runs this: a named statement on the pool (pg-query.ts).
    const rows = await pgQuery<{ id: string; project_id: string; key_hash: Buffer; revoked_at: Date | null }>(
      this.dataSource,
      'SELECT id, project_id, key_hash, revoked_at FROM api_keys WHERE prefix = $1',
      [match[1]],
      'ask_api_key_by_prefix_id',
    );
    const row = rows[0];
    if (!row || row.revoked_at !== null) return null;
    return timingSafeEqual(row.key_hash, sha256(plaintext)) ? { projectId: row.project_id, keyId: row.id } : null;
  }

  /** True while the key `keyId` exists and is not revoked (its project not deleted). */
  async isActive(keyId: string): Promise<boolean> {
    if (!isUuid(keyId)) return false;
    const rows = await this.dataSource.query('SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL', [keyId]);
    return rows.length > 0;
  }

  /**
   * Revokes the project's key (idempotent: the first revocation time is kept).
   * @returns false when the project has no such key.
   */
  async revoke(projectId: string, keyId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(keyId)) return false;
    const [, affected] = await this.dataSource.query(
      'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND project_id = $2',
      [keyId, projectId],
    );
    return affected > 0;
  }

  /** The project's keys, newest first, without secrets. */
  async list(projectId: string): Promise<ApiKeyInfo[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.dataSource.query(
      'SELECT id, project_id, prefix, name, created_at, revoked_at FROM api_keys WHERE project_id = $1 ORDER BY created_at DESC, id',
      [projectId],
    );
    return rows.map(
      (r: {
        id: string;
        project_id: string;
        prefix: string;
        name: string | null;
        created_at: Date;
        revoked_at: Date | null;
      }) => ({
        id: r.id,
        projectId: r.project_id,
        prefix: r.prefix,
        name: r.name,
        createdAt: r.created_at,
        revokedAt: r.revoked_at,
      }),
    );
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
