/**
 * Redis Cluster end to end: the suite starts its own local 3-master cluster (redis-server
 * `--cluster-enabled yes` on free ports, `redis-cli --cluster create … --cluster-replicas 0`), runs
 * the four apps with one setting, REDIS_CLUSTER_NODES, and checks the same event contract as on one
 * Redis: asks (two sessions), an SSE resume with Last-Event-ID, an ingestion, a master restart; the
 * keys spread over the masters, and no app logged CROSSSLOT, MOVED or EXECABORT.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { resolve } from 'node:path';
import type { AskEvent } from '@ask/ask-contracts';
import { loadDocuments } from '@ask/ingestion';
import Redis from 'ioredis';
import { type FaultFixture, QUESTIONS, reassemble, rowsPerAsk, startFixture } from './fixture';
import { type RedisClusterServer, startRedisCluster } from '@ask/stack';

/** Three npm READMEs committed beside the suites (source and licence in the folder's SOURCE-AND-LICENCE). */
const KB_NPM = resolve(__dirname, '..', 'fixtures', 'kb-npm');

/** Event types in order, with each run of deltas folded into one `delta` (as the one-Redis ask-flow suite). */
const shape = (events: AskEvent[]) =>
  events.map((e) => e.type).filter((type, i, all) => !(type === 'delta' && all[i - 1] === 'delta'));

/** Lines of every app log of the suite that match `pattern`. */
function logLines(fx: FaultFixture, pattern: RegExp): string[] {
  const dir = dirname(fx.stack.apps['api-gateway'].logFile);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
    .filter((line) => pattern.test(line));
}

describe('Redis Cluster (3 masters, REDIS_CLUSTER_NODES)', () => {
  let cluster: RedisClusterServer;
  let fx: FaultFixture;
  let masters: Redis[];

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    masters = cluster.ports.map((port) => new Redis({ port, host: '127.0.0.1', lazyConnect: false }));
    fx = await startFixture({
      name: 'redis-cluster',
      // Unused with REDIS_CLUSTER_NODES set: a closed port, so any stray single-server client fails loudly.
      redisUrl: 'redis://127.0.0.1:1/0',
      env: { REDIS_CLUSTER_NODES: cluster.nodes, LOCAL_LLM_CHUNK_DELAY_MS: '5' },
    });
  });

  afterAll(async () => {
    await fx?.close();
    for (const m of masters ?? []) m.disconnect();
    await cluster?.close();
  });

  it('runs asks in two sessions with the one-Redis event contract and one stored row each', async () => {
    const outcomes = [];
    for (const session of [0, 1]) {
      let sessionId: string | undefined;
      for (let turn = 0; turn < 3; turn += 1) {
        const outcome = await fx.client.askAndWait(fx.projectId, QUESTIONS[(session * 3 + turn) % QUESTIONS.length], {
          sessionId,
        });
        sessionId = outcome.sessionId;
        outcomes.push(outcome);
      }
    }
    expect(outcomes.map((o) => shape(o.events))).toEqual(
      outcomes.map(() => ['accepted', 'retrieved', 'budget', 'delta', 'done']),
    );
    // The second and third turns of a session keep the earlier ones (the history read works on a Cluster).
    expect(outcomes.map((o) => o.budget?.turnsKept)).toEqual([0, 1, 2, 0, 1, 2]);
    const rows = await rowsPerAsk(
      fx.db.dataSource,
      outcomes.map((o) => o.askId),
    );
    expect(outcomes.map((o) => rows.get(o.askId)?.count)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(outcomes.map((o) => rows.get(o.askId)?.answer)).toEqual(outcomes.map((o) => o.answer));
  });

  it('spreads the keys over the masters: queues under one hash tag each, streams under 16', async () => {
    const keysPerMaster = await Promise.all(masters.map((m) => m.dbsize()));
    expect(keysPerMaster.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    // Each queue's keys share one slot (its tag), and the two ask queues' tags differ.
    const all = (await Promise.all(masters.map((m) => m.keys('*')))).flat();
    const tagOf = (queue: string) =>
      new Set(all.filter((k) => k.includes(`:${queue}}:`)).map((k) => k.slice(0, k.indexOf('}') + 1)));
    expect([...tagOf('ask-retrieval')]).toEqual([expect.stringMatching(/^\{faults-[0-9a-f-]+:ask-retrieval\}$/)]);
    expect([...tagOf('ask-synthesis')]).toEqual([expect.stringMatching(/^\{faults-[0-9a-f-]+:ask-synthesis\}$/)]);
  });

  it('resumes a stream with Last-Event-ID: every event exactly once, in order', async () => {
    const accepted = await fx.client.ask(fx.projectId, QUESTIONS[2]);
    const first: AskEvent[] = [];
    const controller = new AbortController();
    try {
      for await (const event of fx.client.events(accepted.askId, { signal: controller.signal })) {
        first.push(event);
        if (event.type === 'delta') controller.abort();
      }
    } catch {
      // aborted after the first delta, as a dropped connection
    }
    const rest: AskEvent[] = [];
    for await (const event of fx.client.events(accepted.askId, { lastEventId: first[first.length - 1].id }))
      rest.push(event);
    const all = [...first, ...rest];
    expect(shape(all)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    const stored = await rowsPerAsk(fx.db.dataSource, [accepted.askId]);
    expect(stored.get(accepted.askId)).toEqual({ count: 1, answer: reassemble(all) });
  });

  it('runs an ingestion to done with its progress stream', async () => {
    const docs = await loadDocuments(KB_NPM);
    const accepted = await fx.client.ingestKnowledge(
      fx.projectId,
      docs.map((d) => ({ uri: `cluster/${d.uri}`, title: d.title, text: d.text })),
    );
    const followed = await fx.client.followIngestion(fx.projectId, accepted.ingestionId);
    // As on one Redis (ingestion-flow.spec.ts): started, one progress per document, done.
    expect(followed.events.map((e) => e.type)).toEqual(['started', ...docs.map(() => 'progress'), 'done']);
    expect(followed.done?.status).toBe('completed');
    const [{ n }] = await fx.db.dataSource.query(
      `SELECT count(DISTINCT s.uri)::int AS n FROM knowledge_sources s WHERE s.project_id = $1 AND s.uri LIKE 'cluster/%'`,
      [fx.projectId],
    );
    expect(n).toBe(docs.length);
  });

  it('logged no CROSSSLOT, MOVED or EXECABORT in any app before the restart', () => {
    expect({
      CROSSSLOT: logLines(fx, /CROSSSLOT/).length,
      MOVED: logLines(fx, /MOVED \d+/).length,
      EXECABORT: logLines(fx, /EXECABORT/).length,
    }).toEqual({ CROSSSLOT: 0, MOVED: 0, EXECABORT: 0 });
  });

  it('answers again after a master restart (its data and slots kept), every app healthy', async () => {
    await cluster.restart(0, { downMs: 1_000 });
    const health = async () =>
      Promise.all(
        Object.values(fx.stack.apps).map(async (app) => (await fetch(app.healthUrl).catch(() => undefined))?.status),
      );
    // The apps' Cluster clients reconnect on their own; /health answers 200 once every master does.
    let statuses = await health();
    // A worker stays 503 for QueueLoopHealth's interval (10 s) after its queue loop's last error.
    for (let i = 0; i < 200 && statuses.some((s) => s !== 200); i += 1) {
      await new Promise((r) => setTimeout(r, 200));
      statuses = await health();
    }
    expect(statuses).toEqual([200, 200, 200, 200]);
    const outcomes = [];
    for (const question of QUESTIONS.slice(0, 3)) outcomes.push(await fx.client.askAndWait(fx.projectId, question));
    expect(outcomes.map((o) => shape(o.events))).toEqual(
      outcomes.map(() => ['accepted', 'retrieved', 'budget', 'delta', 'done']),
    );
    // Through the restart too: redirections while the master was away, never a cross-slot command.
    expect([logLines(fx, /CROSSSLOT/).length, logLines(fx, /EXECABORT/).length]).toEqual([0, 0]);
  });
});
