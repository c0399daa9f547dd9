import { type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail, type ThrottlerModuleOptions } from '@nestjs/throttler';
import { rateLimited } from '@ask/ask-errors';
import type { AppConfig } from '@ask/config';
import { ScriptedThrottlerStorage } from './throttler-storage';
import type { RedisClient } from '@ask/event-stream';

/** The rate-limited kinds of route; each has its own per-project budget per minute. */
export type RateLimitName = 'ask' | 'ingest';

const RATE_LIMIT_METADATA = 'ask:rate-limit';
const WINDOW_MS = 60_000;

/** Counts calls of this route against the project's `ask` or `ingest` budget. */
export const RateLimit = (name: RateLimitName) => SetMetadata(RATE_LIMIT_METADATA, name);

/**
 * Options of `ThrottlerModule`: one throttler per {@link RateLimitName}, each applying only to the
 * routes marked with it, `limit` calls per project per 60 s window (ASK_RATE_LIMIT_PER_MINUTE,
 * INGEST_RATE_LIMIT_PER_MINUTE). Counters live in Redis (`{ASK_KEY_PREFIX:rate:<name>:project:<id>:<name>}:hits`)
 * so every gateway replica shares them; counted by {@link ScriptedThrottlerStorage}.
 */
export function throttlerOptions(config: AppConfig, redis: RedisClient): ThrottlerModuleOptions {
  const only = (name: RateLimitName) => (context: ExecutionContext) =>
    Reflect.getMetadata(RATE_LIMIT_METADATA, context.getHandler()) !== name;
  return {
    throttlers: [
      { name: 'ask', ttl: WINDOW_MS, limit: config.ASK_RATE_LIMIT_PER_MINUTE, skipIf: only('ask') },
      { name: 'ingest', ttl: WINDOW_MS, limit: config.INGEST_RATE_LIMIT_PER_MINUTE, skipIf: only('ingest') },
    ],
    // The library's script, sent by hash (EVALSHA) instead of whole on every call.
    storage: new ScriptedThrottlerStorage(redis),
    // Retry-After is set by the error filter from the typed error; no per-throttler header variants.
    setHeaders: false,
    generateKey: (_context, tracker, name) => `${config.ASK_KEY_PREFIX}:rate:${name}:${tracker}`,
  };
}

/**
 * The throttler guard, per project: every key of a project (and the admin acting on it) shares the
 * project's budget. Runs after the auth guard, so only authenticated calls count. Over the limit it
 * throws the typed 429 `rate_limited` with `details: retry_after=<seconds>` (→ `Retry-After` header).
 */
@Injectable()
export class ProjectThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    const params = (request['params'] ?? {}) as Record<string, string>;
    // UUIDs are case-insensitive: `ABC…` and `abc…` are one project, so they share one counter.
    return `project:${(params['projectId'] ?? 'none').toLowerCase()}`;
  }

  protected override async throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw rateLimited(Math.max(1, detail.timeToBlockExpire));
  }
}
