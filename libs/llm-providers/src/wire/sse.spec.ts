import { readSse, sseEndOfStreamFetch, type SseEvent } from './sse';
import { readNdjsonLines } from './ndjson';

/** A body that delivers `chunks` as separate reads (strings UTF-8 encoded, byte arrays as they are). */
function body(chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === 'string' ? encoder.encode(c) : c);
      controller.close();
    },
  });
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('readSse', () => {
  it('dispatches on blank lines, joins data lines, keeps event names and skips comments', async () => {
    const events = await all(
      readSse(body([': keep-alive\n', 'event: message_start\ndata: {"a":', '1}\n\n', 'data: x\ndata: y\r\n\r\n'])),
    );
    expect(events).toEqual<SseEvent[]>([
      { event: 'message_start', data: '{"a":1}' },
      { event: undefined, data: 'x\ny' },
    ]);
  });

  it('decodes a multi-byte character split across reads', async () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n');
    const events = await all(readSse(body([bytes.slice(0, 8), bytes.slice(8, 16), bytes.slice(16)])));
    expect(events).toEqual([{ event: undefined, data: 'héllo ✓' }]);
  });

  it.each([
    ['no newline at all', 'data: {"finish_reason":"stop"}'],
    ['one newline', 'data: {"finish_reason":"stop"}\n'],
    ['one CRLF', 'data: {"finish_reason":"stop"}\r\n'],
  ])('delivers a final event that ends at EOF with %s', async (_, last) => {
    const events = await all(readSse(body(['data: {"delta":"a"}\n\n', last])));
    expect(events.map((e) => e.data)).toEqual(['{"delta":"a"}', '{"finish_reason":"stop"}']);
  });

  it('delivers a named final event at EOF (Anthropic message_stop)', async () => {
    const events = await all(
      readSse(body(['event: ping\ndata: {}\n\n', 'event: message_stop\ndata: {"type":"message_stop"}'])),
    );
    expect(events).toEqual([
      { event: 'ping', data: '{}' },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ]);
  });

  it('adds nothing when the stream ends on a blank line', async () => {
    expect(await all(readSse(body(['data: a\n\n'])))).toEqual([{ event: undefined, data: 'a' }]);
  });

  it('throws the abort error when the signal has fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(all(readSse(body(['data: a\n\n']), controller.signal))).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('readNdjsonLines', () => {
  it('splits LF and CRLF lines and yields the last line without a newline', async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}\r\n{"b":2}\n{"done":true}');
    expect(await all(readNdjsonLines(body([bytes.slice(0, 7), bytes.slice(7)])))).toEqual([
      '{"a":"é"}',
      '{"b":2}',
      '{"done":true}',
    ]);
  });
});

describe('sseEndOfStreamFetch', () => {
  const answer =
    (text: string, contentType: string, status = 200) =>
    async () =>
      new Response(text, { status, headers: { 'content-type': contentType } });

  it('ends an event stream with a blank line, its bytes otherwise unchanged', async () => {
    const response = await sseEndOfStreamFetch(answer('data: {"x":1}', 'text/event-stream; charset=utf-8'))(
      'http://127.0.0.1:9/',
    );
    expect(await response.text()).toBe('data: {"x":1}\n\n');
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  });

  it.each([
    ['a JSON answer', 'application/json', 200],
    ['an error answer', 'text/event-stream', 500],
  ])('passes %s through untouched', async (_, type, status) => {
    const response = await sseEndOfStreamFetch(answer('{"x":1}', type as string, status as number))(
      'http://127.0.0.1:9/',
    );
    expect(response.status).toBe(status);
    expect(await response.text()).toBe('{"x":1}');
  });
});
