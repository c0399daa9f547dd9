import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readReply } from './http-reply';

describe(readReply.name, () => {
  let server: Server;
  let base: string;
  const open = new Set<ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":"invalid_request","details":"q"}');
      } else if (req.url === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('not json');
      } else {
        // An SSE answer that never ends by itself, as an ask's stream while it runs.
        open.add(res);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: started\ndata: {"n":1}\n\n');
        res.on('close', () => open.delete(res));
      }
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const res of open) res.destroy();
    await new Promise<void>((done) => server.close(() => done()));
  });

  const get = async (path: string, sseMs?: number) => {
    const controller = new AbortController();
    const response = await fetch(`${base}${path}`, { signal: controller.signal });
    return { reply: await readReply(response, controller, sseMs), controller };
  };

  it('parses a JSON body and keeps the status and text', async () => {
    const { reply } = await get('/json');
    expect([reply.status, reply.text, reply.body]).toEqual([
      400,
      '{"code":"invalid_request","details":"q"}',
      { code: 'invalid_request', details: 'q' },
    ]);
  });

  it('leaves body undefined for a body that is not JSON', async () => {
    const { reply } = await get('/text');
    expect([reply.status, reply.text, reply.body]).toEqual([200, 'not json', undefined]);
  });

  it('reads an endless SSE answer for a bounded time, then aborts the request', async () => {
    const { reply, controller } = await get('/sse', 100);
    expect([reply.status, reply.text, reply.body, controller.signal.aborted]).toEqual([
      200,
      'event: started\ndata: {"n":1}\n\n',
      undefined,
      true,
    ]);
  });
});
