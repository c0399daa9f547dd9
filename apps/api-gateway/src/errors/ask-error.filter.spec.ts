import { HttpException, HttpStatus, Logger, NotFoundException, type ValidationError } from '@nestjs/common';
import { contextOverflow } from '@ask/ask-errors';
import {
  CredentialsUndecryptableError,
  EmbeddingSpaceMismatchError,
  EncryptionKeyInvalidError,
  EncryptionKeyMissingError,
  PersistenceError,
  SessionNotFoundError,
} from '@ask/persistence';
import { askErrorOf, isStoreSaturated, isStoreUnavailable } from './ask-error.filter';
import { describeValidationErrors } from './validation';

const logger = { error: jest.fn() } as unknown as Logger;

describe('askErrorOf', () => {
  it('keeps an AskError as it is', () => {
    const error = contextOverflow({
      model: 'claude-sonnet-4-6',
      window: 200000,
      question: 12,
      rag: 1200,
      knowledge: 0,
    });
    expect(askErrorOf(error, logger).toBody()).toEqual({
      error: "this conversation has grown past the model's context window",
      code: 'context_overflow',
      details: 'model=claude-sonnet-4-6 window=200000 question=12 rag=1200 knowledge=0',
    });
  });

  it('maps an unknown route to 404 not_found', () => {
    const error = askErrorOf(new NotFoundException('Cannot GET /nope'), logger);
    expect([error.status, error.code]).toEqual([404, 'not_found']);
  });

  it('maps a health failure to 503', () => {
    const error = askErrorOf(
      new HttpException({ message: 'unavailable: redis' }, HttpStatus.SERVICE_UNAVAILABLE),
      logger,
    );
    expect([error.status, error.details]).toEqual([503, 'unavailable: redis']);
  });

  it('maps PostgreSQL or Redis being unreachable (a restart) to a typed 503, not a 500', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
      driverError: { code: '57P01' },
    });
    const terminated = Object.assign(new Error('Connection terminated unexpectedly'), { name: 'QueryFailedError' });
    const ioredis = Object.assign(new Error('Reached the max retries per request limit'), {
      name: 'MaxRetriesPerRequestError',
    });
    const warn = jest.fn();
    for (const cause of [refused, shutdown, terminated, ioredis]) {
      const error = askErrorOf(cause, { error: jest.fn(), warn } as unknown as Logger);
      expect(error.toBody()).toEqual({
        error: 'service unavailable',
        code: 'service_unavailable',
        details: 'the database or the queue is unreachable; retry_after=1',
      });
      expect(error.status).toBe(503);
    }
    expect(warn).toHaveBeenCalledTimes(4);
    expect([isStoreUnavailable(new Error('boom')), isStoreUnavailable(undefined)]).toEqual([false, false]);
  });

  it('maps a saturated PostgreSQL (53300, a pool connect timeout) to 503 service_unavailable with retry_after', () => {
    const tooMany = Object.assign(new Error('sorry, too many clients already'), { code: '53300' });
    const wrapped = Object.assign(new Error('sorry, too many clients already'), {
      name: 'QueryFailedError',
      driverError: tooMany,
    });
    const poolTimeout = new Error('timeout exceeded when trying to connect');
    for (const cause of [tooMany, wrapped, poolTimeout]) {
      expect(isStoreSaturated(cause)).toBe(true);
      const error = askErrorOf(cause, { error: jest.fn(), warn: jest.fn() } as unknown as Logger);
      expect([error.status, error.toBody()]).toEqual([
        503,
        {
          error: 'service unavailable',
          code: 'service_unavailable',
          details: 'the database has no free connection; retry_after=1',
        },
      ]);
    }
    expect(isStoreSaturated(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
  });

  it('maps a malformed JSON body (body-parser) to 400 without echoing it', () => {
    const parserError = Object.assign(new SyntaxError('Unexpected token } in JSON'), {
      status: 400,
      type: 'entity.parse.failed',
    });
    expect(askErrorOf(parserError, logger).toBody()).toEqual({
      error: 'malformed request body',
      code: 'invalid_request',
      details: 'body: not valid JSON (an object is expected)',
    });
  });

  it('hides an unknown error behind an error id and logs it', () => {
    const error = askErrorOf(new Error('connection string postgres://user:secret@db'), logger);
    expect(error.status).toBe(500);
    expect(error.code).toBe('internal_error');
    expect(JSON.stringify(error.toBody())).not.toContain('secret');
    expect(error.details).toMatch(/^error_id=[0-9a-f-]{36}$/);
  });
});

describe('askErrorOf on persistence errors (by code)', () => {
  const project = '4b6f0a9e-0c8f-4d5e-9b1a-2f3c4d5e6f70';
  it.each([
    [new SessionNotFoundError('s-1'), 404, 'not_found', 'session s-1 not found'],
    [
      new PersistenceError('project_not_found', `project ${project} not found`),
      404,
      'not_found',
      `project ${project} not found`,
    ],
    [new PersistenceError('invalid_argument', 'limit must be ≥ 1'), 400, 'invalid_request', 'limit must be ≥ 1'],
    [
      new EmbeddingSpaceMismatchError(project, [{ model: 'local/a', dimensions: 3 }], {
        model: 'local/b',
        dimensions: 3,
      }),
      409,
      'embedding_space_changed',
      `project ${project} already stores embeddings from local/a (3 dimensions); refusing to add vectors from local/b (3 dimensions). Re-embed everything with one model (delete the project's knowledge and re-ingest) or switch back to the stored model.`,
    ],
  ])('maps %s to the caller’s typed error with its message', (error, status, code, details) => {
    const mapped = askErrorOf(error, logger);
    expect([mapped.status, mapped.code, mapped.details]).toEqual([status, code, details]);
  });

  it.each([
    new EncryptionKeyMissingError(),
    new EncryptionKeyInvalidError('17 bytes'),
    new CredentialsUndecryptableError(project),
  ])('hides the operator’s fault %s behind a 500 and an error id, logging the message', (error) => {
    const log = { error: jest.fn() } as unknown as Logger;
    const mapped = askErrorOf(error, log);
    expect([mapped.status, mapped.code]).toEqual([500, 'internal_error']);
    const id = /^error_id=([0-9a-f-]{36})$/.exec(mapped.details ?? '')?.[1];
    expect(id).toBeDefined();
    expect(JSON.stringify(mapped.toBody())).not.toContain('ASK_ENCRYPTION_KEY');
    expect((log.error as jest.Mock).mock.calls[0][0]).toContain(id);
    expect((log.error as jest.Mock).mock.calls[0][0]).toContain(error.message);
  });
});

describe('describeValidationErrors', () => {
  it('names nested fields with dots', () => {
    const errors = [
      {
        property: 'llm',
        children: [{ property: 'model', constraints: { isString: 'model must be a string' }, children: [] }],
      },
    ] as unknown as ValidationError[];
    expect(describeValidationErrors(errors)).toEqual(['llm.model: model must be a string']);
  });
});
