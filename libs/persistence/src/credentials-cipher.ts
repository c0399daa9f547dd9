import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ProviderCredentials } from '@ask/llm-providers';
import { CredentialsUndecryptableError, EncryptionKeyInvalidError, EncryptionKeyMissingError } from './errors';

/** Layout version of sealed credentials; the first byte of every stored value. */
const VERSION = 1;
/** GCM nonce length in bytes (NIST SP 800-38D recommends 96 bits). */
const IV_BYTES = 12;
/** GCM authentication tag length in bytes (128 bits, the maximum). */
const TAG_BYTES = 16;
/** AES-256 key length in bytes. */
const KEY_BYTES = 32;

/**
 * Seals provider credentials with AES-256-GCM under `ASK_ENCRYPTION_KEY`.
 *
 * Stored bytes: version(1) ‖ iv(12) ‖ tag(16) ‖ ciphertext of the credentials' JSON. The project id
 * is the additional authenticated data, so a value copied onto another project's row does not
 * decrypt. A fresh random IV per seal.
 */
export class CredentialsCipher {
  private readonly key: Buffer | null;

  /**
   * @param encryptionKey 32 bytes as 64 hex characters or base64 (44 characters); undefined or
   *   empty leaves the cipher keyless: sealing or opening then throws EncryptionKeyMissingError.
   * @throws EncryptionKeyInvalidError when the key is set but not 32 bytes.
   */
  constructor(encryptionKey: string | undefined) {
    this.key = encryptionKey ? parseKey(encryptionKey) : null;
  }

  /** Whether a key is configured. */
  get hasKey(): boolean {
    return this.key !== null;
  }

  /**
   * Encrypts `credentials` for the project `projectId`.
   * @throws EncryptionKeyMissingError without a key.
   */
  seal(projectId: string, credentials: ProviderCredentials): Buffer {
    const key = this.requireKey();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(projectId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
  }

  /**
   * Decrypts what {@link seal} produced for the same project.
   * @throws EncryptionKeyMissingError without a key; CredentialsUndecryptableError when the bytes
   *   fail authentication (other key, other project, altered or unknown layout).
   */
  open(projectId: string, sealed: Buffer): ProviderCredentials {
    const key = this.requireKey();
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) {
      throw new CredentialsUndecryptableError(projectId);
    }
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const ciphertext = sealed.subarray(1 + IV_BYTES + TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(projectId, 'utf8'));
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as ProviderCredentials;
    } catch {
      throw new CredentialsUndecryptableError(projectId);
    }
  }

  private requireKey(): Buffer {
    if (!this.key) throw new EncryptionKeyMissingError();
    return this.key;
  }
}

function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed, 'base64');
    if (bytes.length === KEY_BYTES) return bytes;
    throw new EncryptionKeyInvalidError(`base64 decodes to ${bytes.length} bytes`);
  }
  throw new EncryptionKeyInvalidError('neither 64 hex characters nor base64');
}
