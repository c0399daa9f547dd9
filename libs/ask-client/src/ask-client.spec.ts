import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AskEvent } from '@ask/ask-contracts';
import { AskApiError, AskClient, applyEvent, type AskOutcome } from './ask-client';

describe('applyEvent', () => {
  const fresh = (): AskOutcome => ({ askId: 'a', sessionId: 's', answer: '', events: [] });
  const ev = (type: AskEvent['type'], data: unknown): AskEvent => ({ id: '1-0', type, data }) as AskEvent;

  it('appends deltas in order', () => {
    const o = fresh();
    applyEvent(o, ev('delta', { text: 'Hello ' }));
    applyEvent(o, ev('delta', { text: 'world' }));
    expect(o.answer).toBe('Hello world');
  });

  it('discards the text streamed before a reset', () => {
    const o = fresh();
    applyEvent(o, ev('delta', { text: 'half an ans' }));
    applyEvent(o, ev('reset', { attempt: 2, reason: 'restart' }));
    applyEvent(o, ev('delta', { text: 'The answer.' }));
    expect(o.answer).toBe('The answer.');
  });

  it('keeps the terminal error', () => {
    const o = fresh();
    applyEvent(o, ev('error', { status: 413, code: 'context_overflow', error: 'x' }));
    expect(o.error?.code).toBe('context_overflow');
  });
});

/**
 * A loopback server standing in for the gateway's event routes: each GET of an events path is
 * answered by the next script of that path (SSE text, then `drop` to cut the connection or `end`).
 */
function fakeGateway(routes: Record<string, Array<{ sse: string; then: 'drop' | 'end' } | { status: number }>>) {
  const seen: Array<{ path: string; lastEventId: string | undefined }> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST') {
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ askId: 'a1', sessionId: 's1', eventsUrl: '/api/v1/asks/a1/events?token=t' }));
      return;
    }
    seen.push({ path, lastEventId: req.headers['last-event-id'] as string | undefined });
    const next = routes[path]?.shift();
    if (!next || 'status' in next) {
      res.writeHead(next?.status ?? 404, { 'content-type': 'application/json' });
      res.end('{"code":"not_found","error":"not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(next.sse, () => (next.then === 'drop' ? res.socket?.destroy() : res.end()));
  });
  return {
    seen,
    start: () =>
      new Promise<string>((done) =>
        server.listen(0, '127.0.0.1', () => done(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe(AskClient.name, () => {
  describe('askAndWait', () => {
    it('resumes after Last-Event-ID when the stream drops before done', async () => {
      const gateway = fakeGateway({
        '/api/v1/asks/a1/events': [
          { sse: 'id: 1-0\nevent: delta\ndata: {"text":"Hello "}\n\n', then: 'drop' },
          {
            sse: 'id: 2-0\nevent: delta\ndata: {"text":"world"}\n\nid: 3-0\nevent: done\ndata: {"finishReason":"stop"}\n\n',
            then: 'end',
          },
        ],
      });
      const client = new AskClient(await gateway.start());
      try {
        const outcome = await client.askAndWait('p1', 'q?');
        expect([outcome.answer, outcome.events.map((e) => e.id), outcome.done]).toEqual([
          'Hello world',
          ['1-0', '2-0', '3-0'],
          { finishReason: 'stop' },
        ]);
        expect(gateway.seen.map((s) => s.lastEventId)).toEqual([undefined, '1-0']);
      } finally {
        await gateway.close();
      }
    });
  });

  describe('followIngestion', () => {
    const path = '/api/v1/projects/p1/ingestions/i1/events';

    it('resumes after Last-Event-ID and returns at done', async () => {
      const gateway = fakeGateway({
        [path]: [
          { sse: 'id: 1-0\nevent: started\ndata: {}\n\n', then: 'drop' },
          { sse: 'id: 2-0\nevent: done\ndata: {"status":"completed"}\n\n', then: 'end' },
        ],
      });
      const client = new AskClient(await gateway.start());
      try {
        const result = await client.followIngestion('p1', 'i1');
        expect([result.events.map((e) => e.id), result.done, result.error]).toEqual([
          ['1-0', '2-0'],
          { status: 'completed' },
          undefined,
        ]);
        expect(gateway.seen.map((s) => s.lastEventId)).toEqual([undefined, '1-0']);
      } finally {
        await gateway.close();
      }
    });

    it('throws a refused reopen as is', async () => {
      const gateway = fakeGateway({
        [path]: [{ sse: 'id: 1-0\nevent: started\ndata: {}\n\n', then: 'drop' }, { status: 404 }],
      });
      const client = new AskClient(await gateway.start());
      try {
        const error = await client.followIngestion('p1', 'i1').catch((err: unknown) => err);
        expect([error instanceof AskApiError, (error as AskApiError).status]).toEqual([true, 404]);
      } finally {
        await gateway.close();
      }
    });

    it('gives up after maxReconnects streams without an end', async () => {
      const drop = { sse: 'id: 1-0\nevent: started\ndata: {}\n\n', then: 'drop' as const };
      const gateway = fakeGateway({ [path]: [drop, drop, drop] });
      const client = new AskClient(await gateway.start());
      try {
        await expect(client.followIngestion('p1', 'i1', { maxReconnects: 2 })).rejects.toThrow(
          'ingestion i1: the event stream ended without done or error',
        );
        expect(gateway.seen.length).toBe(3);
      } finally {
        await gateway.close();
      }
    });
  });
});
