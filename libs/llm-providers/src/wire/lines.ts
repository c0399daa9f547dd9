import { throwIfAborted } from '../errors/upstream-errors';

/**
 * Splits a byte stream into text lines (LF or CRLF), decoding UTF-8 across chunk boundaries. The last
 * line is yielded even without a trailing newline. Throws the abort error when `signal` fires.
 */
export async function* readLines(body: ReadableStream<Uint8Array> | null, signal?: AbortSignal): AsyncGenerator<string> {
  if (!body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    throwIfAborted(signal);
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      yield buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield buffer.replace(/\r$/, '');
  throwIfAborted(signal);
}

/** One server-sent event: its `event:` name (or undefined) and its joined `data:` lines. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/**
 * Parses a `text/event-stream` body into events (WHATWG HTML §9.2 "Server-sent events": fields
 * `event` and `data`, blank line dispatches, `:` comments ignored).
 */
export async function* readSse(body: ReadableStream<Uint8Array> | null, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  let event: string | undefined;
  let data: string[] = [];
  for await (const line of readLines(body, signal)) {
    if (line === '') {
      if (data.length > 0) yield { event, data: data.join('\n') };
      event = undefined;
      data = [];
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length > 0) yield { event, data: data.join('\n') };
}
