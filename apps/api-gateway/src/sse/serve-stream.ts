import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
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
  logger: Logger;
}

/**
 * Serves one SSE stream, the same way for every events route: takes a cap slot of `streamId` (an ask
 * or an ingestion) and of `projectId` (throws before the headers, so the error filter answers the
 * 429), registers `controller` with the route's relays, opens the response and runs `relay`. A
 * failure after the headers becomes a typed `error` event without an id (the client keeps its
 * Last-Event-ID and resumes); the slot is always given back and the response ended.
 * @throws AskError 429 `rate_limited` from {@link StreamCaps.acquire}.
 */
export async function serveStream(
  route: StreamRoute,
  stream: { request: Request; response: Response; controller: AbortController; streamId: string; projectId: string },
  relay: (sse: SseResponse) => Promise<void>,
): Promise<void> {
  const release = route.caps.acquire(stream.streamId, stream.projectId);
  route.relays.add(stream.controller);
  const sse = new SseResponse(stream.request, stream.response, route.maxBufferedBytes);
  try {
    sse.open();
    await relay(sse);
  } catch (err) {
    if (!sse.closed) sse.send({ type: 'error', data: askErrorOf(err, route.logger).toEvent() });
  } finally {
    release();
    route.relays.delete(stream.controller);
    sse.end();
  }
}
