/**
 * Events and Redis commands per answer for a long streamed answer, with delta coalescing on and off
 * (fewer events and Redis commands per answer): the fake OpenAI upstream (tools/fake-upstream) streams a 1,000-token answer, one
 * token per SSE chunk, `--chunk-delay-ms` apart (default 1); the whole stack runs as separate processes
 * on loopback, once with `SYNTHESIS_DELTA_INTERVAL_MS=25` (coalescing on, the default) and once with
 * `0` (every provider chunk its own `delta`), each on the bench's own Redis server so `INFO
 * commandstats` counts this pipeline only. Needs no shared data (no knowledge is ingested).
 *
 *   node tools/run-ts.js bench/pipeline/coalescing.bench.ts [--asks 10] [--chunk-delay-ms 1]
 *
 * Writes bench/pipeline/coalescing-results.json and its own section of bench/RESULTS.md.
 * Nothing here asserts a time; the answer's text is checked to arrive whole in both modes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { gitCommit, machine, numberArg, writeResultsSection } from '../common';
import { AskClient } from '@ask/ask-client';
import { startFakeUpstream, type FakeUpstream } from '@ask/fake-upstream';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { type RedisServer, startRedis, startStack, type Stack } from '@ask/stack';
import { TiktokenCounter } from '@ask/token-counting';
import { callsBetween, commandCalls, median, processCpuMs } from './measure';

const ROOT = resolve(__dirname, '..', '..');
const SECTION = '## Delta coalescing (1,000-token streamed answer)';
const ASKS = numberArg('asks', 10);
const CHUNK_DELAY_MS = numberArg('chunk-delay-ms', 1, 0);
const ANSWER_TOKENS = 1_000;
/** Words that are one o200k_base token each with their leading space. */
const WORDS = [
  ' the',
  ' data',
  ' is',
  ' stored',
  ' in',
  ' a',
  ' table',
  ' and',
  ' each',
  ' row',
  ' has',
  ' an',
  ' index',
  ' on',
  ' its',
  ' key',
];

const round1 = (n: number) => Math.round(n * 10) / 10;

/** One mode's figures per answer. */
interface ModeFigures {
  intervalMs: number;
  asks: number;
  errors: number;
  textExact: boolean;
  eventsPerAnswer: number;
  deltasPerAnswer: number;
  redisCommandsPerAnswer: number;
  redisCommandsPerAnswerByCommand: Record<string, number>;
  cpuMsPerAnswer: { gateway: number; synthesis: number };
  medianPostToDoneMs: number;
  loadAverage1m: number;
}

async function runMode(
  intervalMs: number,
  db: TestDatabase,
  upstream: FakeUpstream,
  answer: string,
): Promise<ModeFigures> {
  const encryptionKey = randomBytes(32).toString('hex');
  const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
  const project = await projects.create({
    name: `coalescing-${intervalMs}`,
    llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
    embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
  });
  await projects.setCredentials(project.id, { apiKey: `sk-bench-${randomUUID()}` });
  const { key } = await new ApiKeysRepository(db.dataSource).create(project.id);
  let redisServer: RedisServer | undefined;
  let redis: Redis | undefined;
  let stack: Stack | undefined;
  try {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: 2 });
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        REDIS_URL: redisServer.url,
        ASK_KEY_PREFIX: `bench-${randomUUID()}`,
        ASK_ENCRYPTION_KEY: encryptionKey,
        LOG_LEVEL: 'warn',
        ASK_RATE_LIMIT_PER_MINUTE: '1000000',
        // The operator allow-lists the fake upstream on loopback (internal addresses are refused otherwise).
        ASK_PROVIDER_URL_ALLOWLIST: upstream.url,
        SYNTHESIS_DELTA_INTERVAL_MS: String(intervalMs),
      },
      logDir: join(ROOT, 'tmp', 'bench-coalescing-logs'),
    });
    const client = new AskClient(stack.gatewayUrl, key);
    // One warm-up ask (not counted): the first ask pays module loading and connection set-up.
    await client.askAndWait(project.id, 'Warm up: how is the data stored?');
    const pids = {
      gateway: stack.apps['api-gateway'].child.pid!,
      synthesis: stack.apps['synthesis-worker'].child.pid!,
    };
    const cpuBefore = { gateway: processCpuMs(pids.gateway), synthesis: processCpuMs(pids.synthesis) };
    const callsBefore = await commandCalls(redis);
    const load = loadavg()[0];
    let events = 0;
    let deltas = 0;
    let errors = 0;
    let textExact = true;
    const times: number[] = [];
    for (let i = 0; i < ASKS; i++) {
      const started = performance.now();
      const outcome = await client.askAndWait(project.id, `Question ${i}: how is the data stored?`);
      times.push(performance.now() - started);
      if (outcome.error) errors++;
      events += outcome.events.length;
      deltas += outcome.events.filter((e) => e.type === 'delta').length;
      if (outcome.answer !== answer) textExact = false;
    }
    const calls = callsBetween(callsBefore, await commandCalls(redis));
    delete calls['info'];
    const cpuAfter = { gateway: processCpuMs(pids.gateway), synthesis: processCpuMs(pids.synthesis) };
    const total = Object.values(calls).reduce((a, b) => a + b, 0);
    return {
      intervalMs,
      asks: ASKS,
      errors,
      textExact,
      eventsPerAnswer: round1(events / ASKS),
      deltasPerAnswer: round1(deltas / ASKS),
      redisCommandsPerAnswer: round1(total / ASKS),
      redisCommandsPerAnswerByCommand: Object.fromEntries(
        Object.entries(calls)
          .sort((a, b) => b[1] - a[1])
          .map(([name, n]) => [name, round1(n / ASKS)]),
      ),
      cpuMsPerAnswer: {
        gateway: round1((cpuAfter.gateway - cpuBefore.gateway) / ASKS),
        synthesis: round1((cpuAfter.synthesis - cpuBefore.synthesis) / ASKS),
      },
      medianPostToDoneMs: round1(median(times)),
      loadAverage1m: Math.round(load * 100) / 100,
    };
  } finally {
    await stack?.stop().catch((err) => console.error(`stack.stop: ${(err as Error).message}`));
    redis?.disconnect();
    await redisServer?.close().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const command = `node tools/run-ts.js bench/pipeline/coalescing.bench.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  const chunks = Array.from({ length: ANSWER_TOKENS }, (_, i) => WORDS[i % WORDS.length]);
  const answer = chunks.join('');
  const answerTokens = new TiktokenCounter('o200k_base').countText(answer);
  let db: TestDatabase | undefined;
  let upstream: FakeUpstream | undefined;
  try {
    db = await createTestDatabase();
    upstream = await startFakeUpstream({ answerChunks: chunks, chunkDelayMs: CHUNK_DELAY_MS });
    const modes: ModeFigures[] = [];
    for (const intervalMs of [0, 25]) {
      console.log(`SYNTHESIS_DELTA_INTERVAL_MS=${intervalMs}: ${ASKS} asks of a ${answerTokens}-token answer…`);
      const figures = await runMode(intervalMs, db, upstream, answer);
      console.log(`  ${JSON.stringify(figures)}`);
      modes.push(figures);
    }
    const results = {
      benchmark: 'delta coalescing (1,000-token streamed answer, fake OpenAI upstream)',
      date: new Date().toISOString(),
      command,
      commit: gitCommit(),
      machine: machine(),
      answer: {
        chunks: chunks.length,
        tokensO200k: answerTokens,
        characters: answer.length,
        chunkDelayMs: CHUNK_DELAY_MS,
      },
      modes,
    };
    writeFileSync(join(__dirname, 'coalescing-results.json'), `${JSON.stringify(results, null, 2)}\n`);
    const [off, on] = modes;
    const row = (label: string, pick: (m: ModeFigures) => string | number) =>
      `| ${label} | ${pick(off)} | ${pick(on)} |`;
    const top = (m: ModeFigures) =>
      Object.entries(m.redisCommandsPerAnswerByCommand)
        .slice(0, 6)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ');
    writeResultsSection(
      SECTION,
      `${SECTION}

The fake OpenAI upstream streams a ${answerTokens}-token answer (o200k_base, ${chunks.length} SSE chunks of one token, ${CHUNK_DELAY_MS} ms apart) to \`openai/gpt-4o\`; the whole stack on loopback, the bench's own \`redis-server\` per mode, ${ASKS} sequential asks per mode after one warm-up. Off = \`SYNTHESIS_DELTA_INTERVAL_MS=0\` (every provider chunk one \`delta\`, one guarded \`XADD\`); on = the default 25 ms / 1,024 characters (\`DeltaCoalescer\`, first chunk at once). Raw figures: \`bench/pipeline/coalescing-results.json\`.

- Command: \`${command}\`
- Date: ${results.date} (commit ${results.commit}); load average (1 min) ${off.loadAverage1m} / ${on.loadAverage1m} at the start of each mode

| Per answer | Coalescing off | Coalescing on |
|---|---:|---:|
${row('Events (all types)', (m) => m.eventsPerAnswer)}
${row('`delta` events', (m) => m.deltasPerAnswer)}
${row('Redis commands (whole pipeline)', (m) => m.redisCommandsPerAnswer)}
${row('CPU ms, gateway / synthesis worker', (m) => `${m.cpuMsPerAnswer.gateway} / ${m.cpuMsPerAnswer.synthesis}`)}
${row('POST → `done` median (ms)', (m) => m.medianPostToDoneMs)}
${row('Answer text arrived exact, errors', (m) => `${m.textExact ? 'yes' : 'NO'}, ${m.errors}`)}

Top Redis commands per answer, off: ${top(off)}. On: ${top(on)}.
`,
    );
    console.log('wrote bench/pipeline/coalescing-results.json and its section of bench/RESULTS.md');
    if (modes.some((m) => m.errors || !m.textExact)) process.exitCode = 1;
  } finally {
    await upstream?.close();
    await db?.drop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
