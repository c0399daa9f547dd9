import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { unauthorized } from '@ask/ask-errors';
import { askErrorOf } from '../errors/ask-error.filter';
import { SseResponse } from './sse-response';
import type { StreamCaps } from './stream-caps';

/** What {@link serveStream} needs of the route serving the stream. */
export interface StreamRoute {
  caps: StreamCaps;
  /** Open relays of the route, aborted at shutdown (clients resume with Last-Event-ID elsewhere). */
  relays: Set<AbortController>;
  /** ASK_STREAM_BUFFER_BYTES: bytes a client may leave unread before it is dropped. */
  maxBufferedBytes: number;
  /** ASK_STREAM_KEY_RECHECK_MS: how often a stream re-checks the API key that opened it. */
  keyRecheckMs: number;
  logger: Logger;
}

/** The `details` of the `error` event that ends a stream whose API key was revoked. */
export const KEY_REVOKED_DETAILS = 'the API key this stream was opened with has been revoked';

/**
 * Serves one SSE stream, the same way for every events route: takes a cap slot of `streamId` (an ask
 * or an ingestion) and of `projectId` (throws before the headers, so the error filter answers the
 * 429), registers `controller` with the route's relays, opens the response and runs `relay`. A
 * failure after the headers becomes a typed `error` event without an id (the client keeps its
 * Last-Event-ID and resumes); the slot is always given back and the response ended.
 *
 * With `keyStillValid` (a stream opened with a project API key, see `keyRecheck`), the key is
 * re-checked every `route.keyRecheckMs`: once it no longer verifies, the relay is aborted and the
 * stream ends with one `error` event without an id (401 `unauthorized`, details
 * {@link KEY_REVOKED_DETAILS}); the client's reconnect then gets the 401 answer. A check that fails
 * (PostgreSQL unreachable) keeps the stream: only a definite "revoked" ends it.
 * @throws AskError 429 `rate_limited`, 503 `service_unavailable` from {@link StreamCaps.acquire}.
 */
export async function serveStream(
  route: StreamRoute,
  stream: {
    request: Request;
    response: Response;
    controller: AbortController;
    streamId: string;
    projectId: string;
    keyStillValid?: () => Promise<boolean>;
  },
  relay: (sse: SseResponse) => Promise<void>,
): Promise<void> {
  const release = await route.caps.acquire(stream.streamId, stream.projectId);
  route.relays.add(stream.controller);
  const sse = new SseResponse(stream.request, stream.response, route.maxBufferedBytes);
  const revocation = watchRevocation(stream.keyStillValid, route.keyRecheckMs, stream.controller.signal);
  try {
    sse.open();
    const relayed = relay(sse);
    // The relay may be parked on a slow client's drain: the revocation ends the stream regardless.
    relayed.catch(() => undefined);
    const revoked = await Promise.race([relayed.then(() => false), revocation.revoked]);
    if (revoked) {
      stream.controller.abort();
      if (!sse.closed) sse.send({ type: 'error', data: unauthorized(KEY_REVOKED_DETAILS).toEvent() });
    }
  } catch (err) {
    if (!sse.closed) sse.send({ type: 'error', data: askErrorOf(err, route.logger).toEvent() });
  } finally {
    revocation.stop();
    release();
    route.relays.delete(stream.controller);
    sse.end();
  }
}

/**
 * Re-runs `check` every `everyMs` until `signal` aborts or {@link stop}; `revoked` resolves true the
 * first time `check` resolves false (a rejected check counts as still valid). Never resolves
 * otherwise. One check at a time: a slow lookup delays the next one instead of piling up.
 */
function watchRevocation(
  check: (() => Promise<boolean>) | undefined,
  everyMs: number,
  signal: AbortSignal,
): { revoked: Promise<boolean>; stop(): void } {
  if (!check) return { revoked: new Promise<boolean>(() => undefined), stop: () => undefined };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const revoked = new Promise<boolean>((resolve) => {
    const tick = async () => {
      const valid = await check().catch(() => true);
      if (stopped || signal.aborted) return;
      if (!valid) return resolve(true);
      timer = setTimeout(tick, everyMs);
    };
    timer = setTimeout(tick, everyMs);
  });
  return {
    revoked,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
