import { randomBytes } from 'node:crypto';
import { CredentialsCipher } from './credentials-cipher';
import { CredentialsUndecryptableError, EncryptionKeyInvalidError, EncryptionKeyMissingError } from './errors';

const HEX_KEY = 'a'.repeat(64);
const PROJECT = '3f2c1a9e-5b7d-4c8e-9f10-1a2b3c4d5e6f';
const OTHER_PROJECT = '00000000-0000-4000-8000-000000000001';

describe(CredentialsCipher.name, () => {
  describe('constructor', () => {
    it('accepts 32 bytes as hex or base64', () => {
      expect(new CredentialsCipher(HEX_KEY).hasKey).toBe(true);
      expect(new CredentialsCipher(randomBytes(32).toString('base64')).hasKey).toBe(true);
    });

    it('is keyless when the key is unset or empty', () => {
      expect(new CredentialsCipher(undefined).hasKey).toBe(false);
      expect(new CredentialsCipher('').hasKey).toBe(false);
    });

    it('rejects a key that is not 32 bytes', () => {
      expect(() => new CredentialsCipher(randomBytes(16).toString('base64'))).toThrow(EncryptionKeyInvalidError);
      expect(() => new CredentialsCipher('not a key!')).toThrow(
        'ASK_ENCRYPTION_KEY must be 32 bytes, base64 or hex: neither 64 hex characters nor base64',
      );
    });
  });

  describe('seal', () => {
    it('produces version ‖ 12-byte IV ‖ 16-byte tag ‖ ciphertext, never the plaintext', () => {
      const sealed = new CredentialsCipher(HEX_KEY).seal(PROJECT, { apiKey: 'sk-planted-123' });
      expect(sealed[0]).toBe(1);
      expect(sealed.length).toBe(1 + 12 + 16 + JSON.stringify({ apiKey: 'sk-planted-123' }).length);
      expect(sealed.includes(Buffer.from('sk-planted-123'))).toBe(false);
    });

    it('uses a fresh IV each time', () => {
      const cipher = new CredentialsCipher(HEX_KEY);
      expect(cipher.seal(PROJECT, { apiKey: 'k' }).equals(cipher.seal(PROJECT, { apiKey: 'k' }))).toBe(false);
    });

    it('throws a clear error without a key', () => {
      expect(() => new CredentialsCipher(undefined).seal(PROJECT, { apiKey: 'k' })).toThrow(EncryptionKeyMissingError);
      expect(() => new CredentialsCipher(undefined).seal(PROJECT, { apiKey: 'k' })).toThrow(
        /ASK_ENCRYPTION_KEY is not set/,
      );
    });
  });

  describe('open', () => {
    const cipher = new CredentialsCipher(HEX_KEY);
    const credentials = { awsAccessKeyId: 'AKIA', awsSecretAccessKey: 'secret' };

    it('returns what was sealed for the same project', () => {
      expect(cipher.open(PROJECT, cipher.seal(PROJECT, credentials))).toEqual(credentials);
    });

    it('refuses a value moved to another project', () => {
      expect(() => cipher.open(OTHER_PROJECT, cipher.seal(PROJECT, credentials))).toThrow(
        CredentialsUndecryptableError,
      );
    });

    it('refuses another key and altered bytes', () => {
      const sealed = cipher.seal(PROJECT, credentials);
      expect(() => new CredentialsCipher('b'.repeat(64)).open(PROJECT, sealed)).toThrow(CredentialsUndecryptableError);
      const altered = Buffer.from(sealed);
      altered[altered.length - 1] ^= 1;
      expect(() => cipher.open(PROJECT, altered)).toThrow(CredentialsUndecryptableError);
      expect(() => cipher.open(PROJECT, Buffer.from([2, 0, 0]))).toThrow(CredentialsUndecryptableError);
    });
  });
});
