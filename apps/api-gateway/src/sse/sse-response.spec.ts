import { createServer, type Server } from 'node:http';
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
