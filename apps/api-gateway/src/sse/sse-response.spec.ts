import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { type SseEvent, SseResponse } from './sse-response';

/** Events as the relay hands them over: ids, a line break in a type, text with quotes and a newline. */
const EVENTS: SseEvent[] = [
  { id: '1718000000000-0', type: 'accepted', data: { askId: 'a', sessionId: 's' } },
  { id: '1718000000001-0', type: 'delta', data: { text: 'He said "hi"\nthen left' } },
  { id: '1718000000001-1', type: 'del\nta', data: { text: 'é 🙂' } },
  { type: 'error', data: { code: 'internal_error' } },
];

/** The frames one `send` per event wrote before issue 19 (the format Nest's `@Sse` writes). */
const EXPECTED_BODY =
  '\n' +
  'event: accepted\nid: 1718000000000-0\ndata: {"askId":"a","sessionId":"s"}\n\n' +
  'event: delta\nid: 1718000000001-0\ndata: {"text":"He said \\"hi\\"\\nthen left"}\n\n' +
  'event: delta\nid: 1718000000001-1\ndata: {"text":"é 🙂"}\n\n' +
  'event: error\ndata: {"code":"internal_error"}\n\n';

/**
 * A loopback server whose one route opens an SseResponse, writes EVENTS with `serve` and ends; the
 * raw HTTP bytes of the answer are read with a plain socket, so the chunks on the wire are seen.
 */
async function rawAnswer(serve: (sse: SseResponse) => void): Promise<{ head: string; chunks: string[] }> {
  const server: Server = createServer((req, res) => {
    const sse = new SseResponse(req as unknown as Request, res as unknown as Response, 1 << 20);
    sse.open();
    serve(sse);
    sse.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET /events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
      );
      // The answer says `Connection: keep-alive`: it is whole at the last chunk, not at the socket's end.
      socket.on('data', (part) => {
        parts.push(part);
        const sofar = Buffer.concat(parts);
        if (sofar.subarray(-5).toString('latin1') === '0\r\n\r\n') {
          socket.destroy();
          resolve(sofar);
        }
      });
      socket.on('error', reject);
    });
    const split = raw.indexOf('\r\n\r\n');
    return { head: raw.subarray(0, split).toString('latin1'), chunks: dechunk(raw.subarray(split + 4)) };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The chunks of a chunked body, each as UTF-8 text, without the final empty chunk. */
function dechunk(body: Buffer): string[] {
  const chunks: string[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (size === 0) return chunks;
    chunks.push(body.subarray(eol + 2, eol + 2 + size).toString('utf8'));
    at = eol + 2 + size + 2;
  }
}

describe(SseResponse.name, () => {
  describe('sendAll', () => {
    it('writes the same bytes and ids as one send per event', async () => {
      const one = await rawAnswer((sse) => EVENTS.forEach((event) => sse.send(event)));
      const all = await rawAnswer((sse) => sse.sendAll(EVENTS));
      expect(one.chunks.join('')).toBe(EXPECTED_BODY);
      expect(all.chunks.join('')).toBe(EXPECTED_BODY);
    });

    it('writes a batch as one chunk of the response, after the opening line', async () => {
      const one = await rawAnswer((sse) => EVENTS.forEach((event) => sse.send(event)));
      const all = await rawAnswer((sse) => sse.sendAll(EVENTS));
      expect(one.chunks).toHaveLength(1 + EVENTS.length);
      expect(all.chunks).toEqual(['\n', EXPECTED_BODY.slice(1)]);
    });

    it("keeps Nest's SSE headers", async () => {
      const { head } = await rawAnswer((sse) => sse.sendAll(EVENTS));
      expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
      expect(head).toContain('\r\nContent-Type: text/event-stream');
      expect(head).toContain(
        '\r\nCache-Control: private, no-cache, no-store, must-revalidate, max-age=0, no-transform',
      );
      expect(head).toContain('\r\nTransfer-Encoding: chunked');
    });

    it('writes nothing for an empty batch and nothing once the response has ended', async () => {
      let afterEnd: boolean | undefined;
      const { chunks } = await rawAnswer((sse) => {
        expect(sse.sendAll([])).toBe(true);
        sse.end();
        afterEnd = sse.sendAll(EVENTS);
      });
      expect(afterEnd).toBe(false);
      expect(chunks).toEqual(['\n']);
    });
  });
});

/**
 * A loopback server whose one route opens an SseResponse of `maxBuffered` bytes and hands it to the
 * test, with a raw client socket that starts paused (a reader that has not read yet): the test
 * resumes it and reads the whole body.
 */
async function slowReader(maxBuffered: number) {
  let handed!: (pair: { sse: SseResponse; res: ServerResponse }) => void;
  const opened = new Promise<{ sse: SseResponse; res: ServerResponse }>((resolve) => (handed = resolve));
  const server: Server = createServer((req, res) => {
    const sse = new SseResponse(req as unknown as Request, res as unknown as Response, maxBuffered);
    sse.open();
    handed({ sse, res });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const parts: Buffer[] = [];
  const socket = connect(port, '127.0.0.1', () =>
    socket.write('GET /events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
  );
  // The answer says `Connection: keep-alive`: it is whole at the last chunk (or cut at the socket's close).
  let whole!: () => void;
  const closed = new Promise<void>((resolve) => (whole = resolve));
  socket.on('data', (part) => {
    parts.push(part);
    if (part.subarray(-5).toString('latin1') === '0\r\n\r\n') whole();
  });
  socket.on('close', () => whole());
  const { sse, res } = await opened;
  socket.pause();
  return {
    sse,
    res,
    /** Reads on, until the server ends or drops the response; the body's chunks joined. */
    async read(): Promise<string> {
      socket.resume();
      await closed;
      const raw = Buffer.concat(parts);
      const split = raw.indexOf('\r\n\r\n');
      const body = raw.subarray(split + 4);
      return body.subarray(-5).toString('latin1') === '0\r\n\r\n' ? dechunk(body).join('') : '(dropped)';
    },
    async close() {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** 128 delta events of 64 KiB of text: 8 MiB, far more than a paused loopback reader's kernel buffers. */
const LONG_ANSWER: SseEvent[] = Array.from({ length: 128 }, (_, i) => ({
  id: `1718000000000-${i}`,
  type: 'delta',
  data: { text: String.fromCharCode(97 + (i % 26)).repeat(65_536) },
}));
const LONG_BODY =
  '\n' + LONG_ANSWER.map((e) => `event: delta\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`).join('');

describe(`${SseResponse.name} with a slow reader (issue 25 item 4)`, () => {
  it('sendAll drops a reader that leaves more than the buffer unread (live data)', async () => {
    const pair = await slowReader(1 << 20);
    try {
      expect(pair.sse.sendAll(LONG_ANSWER)).toBe(false);
      expect(pair.sse.droppedSlowClient).toBe(true);
      expect(await pair.read()).toBe('(dropped)');
    } finally {
      await pair.close();
    }
  });

  it('sendPaced writes 8 MiB to it in writes of at most the buffer, waiting for each drain, never dropping it', async () => {
    const pair = await slowReader(1 << 20);
    try {
      const writes: number[] = [];
      const unread: number[] = [];
      const write = pair.res.write.bind(pair.res);
      pair.res.write = ((chunk: string) => {
        writes.push(Buffer.byteLength(chunk));
        const taken = write(chunk);
        unread.push(pair.res.writableLength);
        return taken;
      }) as typeof pair.res.write;
      const sent = pair.sse.sendPaced(LONG_ANSWER);
      const body = pair.read();
      expect(await sent).toBe(true);
      pair.sse.end();
      expect(await body).toBe(LONG_BODY);
      expect(pair.sse.droppedSlowClient).toBe(false);
      // 15 frames of about 65,583 bytes fit in 1 MiB: 8 writes of 15 frames and one of 8.
      expect(writes).toHaveLength(9);
      expect(writes.reduce((a, b) => a + b, 0)).toBe(Buffer.byteLength(LONG_BODY) - 1);
      expect(Math.max(...writes)).toBeLessThanOrEqual(1 << 20);
      expect(Math.max(...unread)).toBeLessThanOrEqual(1 << 20);
      expect(pair.res.listenerCount('drain')).toBe(0);
    } finally {
      await pair.close();
    }
  });

  it('shares one drain wait among every caller: 50 waits add one drain and one close listener, removed when it drains', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const pair = await slowReader(64 << 20);
    try {
      const before = pair.res.listenerCount('close');
      expect(pair.sse.sendAll(LONG_ANSWER)).toBe(true);
      const waits = Array.from({ length: 50 }, () => pair.sse.drained());
      expect(pair.res.listenerCount('drain')).toBe(1);
      expect(pair.res.listenerCount('close')).toBe(before + 1);
      const body = pair.read();
      await Promise.all(waits);
      expect(pair.res.listenerCount('drain')).toBe(0);
      expect(pair.res.listenerCount('close')).toBe(before);
      pair.sse.end();
      expect(await body).toBe(LONG_BODY);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await pair.close();
    }
  });
});
