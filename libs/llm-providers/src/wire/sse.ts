import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { throwIfAborted } from '../errors/upstream-errors';
import type { FetchLike } from './http';

/** One server-sent event: its `event:` name (or undefined) and its joined `data:` lines. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/**
 * Parses a `text/event-stream` body into events with `eventsource-parser` (WHATWG HTML §9.2
 * "Server-sent events"), decoding UTF-8 across chunk boundaries.
 *
 * End of stream dispatches a pending event: a provider whose final event (OpenAI's `finish_reason`
 * chunk, Anthropic's `message_stop`, Gemini's `finishReason`) is the last bytes, without the blank
 * line that would dispatch it, still delivers it. The WHATWG algorithm discards such an event, which
 * would turn a complete answer into "stream ended without its final event"; providers write whole
 * events, so a trailing one is complete (openai-node#2725 does the same). A stream that truly lacks
 * its final event still lacks it here, and each adapter reports that as `incomplete`.
 *
 * @throws the abort error when `signal` fires.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array> | null,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  if (!body) return;
  const ready: SseEvent[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => ready.push({ event: message.event, data: message.data }),
  });
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    throwIfAborted(signal);
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (ready.length > 0) yield ready.shift()!;
  }
  throwIfAborted(signal);
  // End of stream ends the last line and the last event (see above).
  parser.feed(`${decoder.decode()}\n\n`);
  while (ready.length > 0) yield ready.shift()!;
}

/**
 * Wraps `fetch` for the SDKs that parse SSE themselves (`openai`, `@anthropic-ai/sdk`): a 2xx
 * `text/event-stream` body gets a blank line after its last byte, so the SDK's decoder dispatches a
 * final event that ended at EOF without one (both SDKs drop it: their decoders dispatch only on a
 * blank line). The bytes of the stream are passed through unchanged; a stream whose last event is
 * already terminated gains only an empty line, which dispatches nothing. Other answers pass untouched.
 * @param base the fetch to wrap; default the global `fetch` at call time.
 */
export function sseEndOfStreamFetch(base?: FetchLike): FetchLike {
  return async (input, init) => {
    // No `base`: the global fetch at call time (what the SDKs use without one).
    const response = await (base ?? globalThis.fetch)(input, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !response.body || !/^text\/event-stream\b/i.test(type)) return response;
    const blankLine = new TextEncoder().encode('\n\n');
    const terminated = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        flush(controller) {
          controller.enqueue(blankLine);
        },
      }),
    );
    return new Response(terminated, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
