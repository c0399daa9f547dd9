import type { RedisClient } from './redis-connections';
import { TERMINAL_EVENTS, type ErrorEvent } from '@ask/ask-contracts';

/**
 * Appends an `error` event to a stream only when the stream exists and its last entry is not
 * terminal (`done` or `error`), in one Lua script, so the check and the append cannot interleave with
 * a worker's terminal event: a stream's terminal event stays its last. Touches only KEYS[1], so it
 * also runs on a Redis Cluster. Replies `{1, id}` when appended, `{0, id}` with the id of the
 * terminal event already there, `{-1}` when the stream does not exist.
 */
const APPEND_UNLESS_ENDED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'type' then
      for t in string.gmatch(ARGV[3], '[^,]+') do
        if fields[i + 1] == t then return {0, last[1][1]} end
      end
    end
  end
end
local id = redis.call('XADD', KEYS[1], '*', 'type', 'error', 'data', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return {1, id}
`;

/** The outcome of {@link publishErrorUnlessEnded}. */
export type GuardedPublish =
  { outcome: 'appended'; id: string } | { outcome: 'already-ended'; id: string } | { outcome: 'missing' };

/**
 * Ends a stream with `error` unless it has ended already (the relay's deadline 504): atomic, so a
 * `done` published at the same moment is never followed by the error, and repeating it is a no-op.
 * @param key the full stream key (`{prefix}:ask:{askId}:events`).
 * @param ttlSeconds expiry set on the stream when the error is appended.
 */
export async function publishErrorUnlessEnded(
  redis: RedisClient,
  key: string,
  error: ErrorEvent,
  ttlSeconds: number,
): Promise<GuardedPublish> {
  const reply = (await redis.eval(
    APPEND_UNLESS_ENDED,
    1,
    key,
    JSON.stringify(error),
    ttlSeconds,
    [...TERMINAL_EVENTS].join(','),
  )) as [number, string?];
  if (reply[0] === 1) return { outcome: 'appended', id: reply[1]! };
  if (reply[0] === 0) return { outcome: 'already-ended', id: reply[1]! };
  return { outcome: 'missing' };
}
