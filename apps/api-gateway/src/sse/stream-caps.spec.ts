import Redis from 'ioredis';
import { AskError } from '@ask/ask-errors';
import { removeKeysUnder, testKeyPrefix, testRedisUrl } from '@ask/testing';
import { INGESTION_STREAM_CAPS, ProcessStreams, StreamCaps } from './stream-caps';

const URL = testRedisUrl();

/** The typed error `promise` rejects with, as `code` and `details`. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; details?: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AskError) return { code: err.code, details: err.details };
    throw err;
  }
  throw new Error('expected a refusal');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Two gateway processes of one deployment: one Redis, one key prefix, one ProcessStreams each.
describe('StreamCaps (fleet-wide stream caps)', () => {
  const prefix = testKeyPrefix('stream-caps');
  const redis = new Redis(URL);
  const processes: ProcessStreams[] = [];
  const gateway = (max = 100, leaseMs = 30_000) => {
    const streams = new ProcessStreams(redis, max, leaseMs);
    processes.push(streams);
    return {
      streams,
      asks: new StreamCaps(streams, prefix, 'ask', { perAsk: 2, perProject: 3 }),
      ingestions: new StreamCaps(streams, prefix, 'ingestion', { perAsk: 2, perProject: 3 }, INGESTION_STREAM_CAPS),
    };
  };

  afterAll(async () => {
    for (const p of processes) p.close();
    await removeKeysUnder(redis, prefix);
    redis.disconnect();
  });

  it('counts one ask’s streams across two gateways: the third is a 429 on either, a slot given back is taken on the other', async () => {
    const a = gateway();
    const b = gateway();
    const first = await a.asks.acquire('ask-1', 'p1');
    await b.asks.acquire('ask-1', 'p1');
    expect(await refusal(a.asks.acquire('ask-1', 'p1'))).toEqual({
      code: 'rate_limited',
      details: 'limit=streams_per_ask max=2 retry_after=5',
    });
    expect(await refusal(b.asks.acquire('ask-1', 'p1'))).toMatchObject({ code: 'rate_limited' });
    first();
    first(); // idempotent: gives back one slot, not two
    await b.asks.acquire('ask-1', 'p1');
    expect(await refusal(a.asks.acquire('ask-1', 'p1'))).toMatchObject({ code: 'rate_limited' });
    // The refused attempts held nothing: the sorted set has exactly the two open streams.
    expect(await redis.zcard(`${prefix}:streams:ask:ask:ask-1`)).toBe(2);
    expect(await redis.zcard(`${prefix}:streams:ask:project:p1`)).toBe(2);
  });

  it('counts a project’s streams across gateways and asks, ingestion streams apart', async () => {
    const a = gateway();
    const b = gateway();
    await a.asks.acquire('ask-2', 'p2');
    await b.asks.acquire('ask-3', 'p2');
    await a.asks.acquire('ask-4', 'p2');
    expect(await refusal(b.asks.acquire('ask-5', 'p2'))).toEqual({
      code: 'rate_limited',
      details: 'limit=streams_per_project max=3 retry_after=5',
    });
    // A refusal on the project cap gives back the ask slot it took first.
    expect(await redis.zcard(`${prefix}:streams:ask:ask:ask-5`)).toBe(0);
    await b.ingestions.acquire('ing-1', 'p2');
    expect(await refusal(a.ingestions.acquire('ing-1', 'p2').then(() => a.ingestions.acquire('ing-1', 'p2')))).toEqual({
      code: 'rate_limited',
      details: 'limit=streams_per_ingestion max=2 retry_after=5',
    });
  });

  it('caps one process’s streams of every kind (streams_per_process), while another process still serves', async () => {
    const a = gateway(2);
    const b = gateway(2);
    const release = await a.asks.acquire('ask-6', 'p3');
    await a.ingestions.acquire('ing-2', 'p3');
    expect(await refusal(a.asks.acquire('ask-7', 'p4'))).toEqual({
      code: 'rate_limited',
      details: 'limit=streams_per_process max=2 retry_after=5',
    });
    await b.asks.acquire('ask-7', 'p4');
    release();
    expect(a.streams.count).toBe(1);
    await a.asks.acquire('ask-7', 'p4');
  });

  it('frees the slots of a gateway that stops renewing (killed) after its lease, and keeps a live one’s', async () => {
    const live = gateway(100, 300);
    const killed = gateway(100, 300);
    await live.asks.acquire('ask-8', 'p5');
    await killed.asks.acquire('ask-8', 'p5');
    killed.streams.close(); // no renewal from here on, as after SIGKILL
    const other = gateway(100, 300);
    expect(await refusal(other.asks.acquire('ask-8', 'p5'))).toMatchObject({ code: 'rate_limited' });
    let taken = false;
    for (let i = 0; i < 40 && !taken; i += 1) {
      await sleep(100);
      taken = await other.asks.acquire('ask-8', 'p5').then(
        () => true,
        () => false,
      );
    }
    expect(taken).toBe(true);
    // Three lease lengths later the live gateway's slot (renewed every 100 ms) is still held.
    await sleep(900);
    expect(await refusal(other.asks.acquire('ask-8', 'p5'))).toMatchObject({ code: 'rate_limited' });
  });

  it('answers 503 service_unavailable, with no connection detail, when Redis cannot be reached; the process slot is given back', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    down.on('error', () => undefined);
    const streams = new ProcessStreams(down, 1);
    const caps = new StreamCaps(streams, prefix, 'ask', { perAsk: 2, perProject: 3 });
    expect(await refusal(caps.acquire('ask-9', 'p6'))).toEqual({
      code: 'service_unavailable',
      details: 'event streams unavailable (Redis); retry_after=5',
    });
    expect(streams.count).toBe(0);
    down.disconnect();
  });
});
