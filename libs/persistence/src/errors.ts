/**
 * Errors raised by the persistence layer. Each carries a stable `code` so the apps can map it to a
 * typed HTTP error without matching on messages.
 */
export class PersistenceError extends Error {
  constructor(
    readonly code:
      | 'encryption_key_missing'
      | 'encryption_key_invalid'
      | 'credentials_undecryptable'
      | 'session_not_found'
      | 'project_not_found'
      | 'embedding_dimensions_mismatch'
      | 'invalid_argument',
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A credential is stored or read while `ASK_ENCRYPTION_KEY` is unset. */
export class EncryptionKeyMissingError extends PersistenceError {
  constructor() {
    super(
      'encryption_key_missing',
      'ASK_ENCRYPTION_KEY is not set: provider credentials are stored encrypted (AES-256-GCM) and need a 32-byte key, base64 or hex (e.g. `openssl rand -base64 32`)',
    );
  }
}

/** `ASK_ENCRYPTION_KEY` is not 32 bytes in base64 or hex. */
export class EncryptionKeyInvalidError extends PersistenceError {
  constructor(detail: string) {
    super('encryption_key_invalid', `ASK_ENCRYPTION_KEY must be 32 bytes, base64 or hex: ${detail}`);
  }
}

/** Stored credentials fail authentication (wrong key, or the bytes were altered or moved). */
export class CredentialsUndecryptableError extends PersistenceError {
  constructor(projectId: string) {
    super(
      'credentials_undecryptable',
      `stored credentials of project ${projectId} cannot be decrypted with ASK_ENCRYPTION_KEY`,
    );
  }
}

/** The session does not exist or belongs to another project. */
export class SessionNotFoundError extends PersistenceError {
  constructor(sessionId: string) {
    super('session_not_found', `session ${sessionId} not found`);
  }
}

/**
 * Vectors of another length or model are already stored for the project; mixing them would make
 * cosine ranking meaningless, so the write is refused.
 */
export class EmbeddingSpaceMismatchError extends PersistenceError {
  constructor(
    readonly projectId: string,
    readonly stored: readonly EmbeddingSpace[],
    readonly incoming: EmbeddingSpace,
  ) {
    super(
      'embedding_dimensions_mismatch',
      `project ${projectId} already stores embeddings from ${stored.map(describeSpace).join(', ')}; ` +
        `refusing to add vectors from ${describeSpace(incoming)}. Re-embed everything with one model ` +
        `(delete the project's knowledge and re-ingest) or switch back to the stored model.`,
    );
  }
}

/** Which model produced a vector, and its length; vectors are comparable only within one space. */
export interface EmbeddingSpace {
  /** `provider/model`, e.g. `local/local-lexical-v1`. */
  model: string;
  /** Vector length. */
  dimensions: number;
}

function describeSpace(space: EmbeddingSpace): string {
  return `${space.model} (${space.dimensions} dimensions)`;
}
