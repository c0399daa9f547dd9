import { randomUUID } from 'node:crypto';
import type { AskClient } from '@ask/ask-client';
import type { AskEvent } from '@ask/ask-contracts';
import { type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import { startTrustStack, type TrustStack } from './trust-stack';

/** 256 chunks of 64 KiB: a 16 MiB answer, each chunk numbered so a gap or a repeat shows. */
const CHUNK = 65_536;
const CHUNKS = Array.from(
  { length: 256 },
  (_, i) => `${String(i).padStart(5, '0')} ${String.fromCharCode(97 + (i % 26)).repeat(CHUNK - 6)}`,
);

/**
 * Issue 25 item 4, end to end: a finished 16 MiB answer (the fake OpenAI upstream streams it in
 * 64 KiB chunks, so its deltas are large) is replayed through the events route from the start and
 * resumed from a middle id with the default ASK_STREAM_BUFFER_BYTES (1 MiB): both readers get every
 * byte of the stored answer, and the gateway logs no MaxListenersExceededWarning.
 */
describe('a 16 MiB answer replayed and resumed through the events route', () => {
  let upstream: FakeUpstream;
  let t: TrustStack;
  let project: { id: string; key: string; client: AskClient };
  let askId: string;
  let stored: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ chunkDelayMs: 0, answerChunks: CHUNKS });
    t = await startTrustStack('long-replay', { ASK_PROVIDER_URL_ALLOWLIST: upstream.url });
    project = await t.project(
      'long',
      {
        llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` } as never,
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as never,
        // No summary of the 16 MiB pair (a provider summariser would be sent all of it).
        memorySettings: { mode: 'off' },
      },
      { apiKey: `sk-test-${randomUUID()}` },
    );
    // Not followed live: the answer is read only once it is stored (a fresh reader of a finished ask).
    askId = (await project.client.ask(project.id, 'Write the long answer.')).askId;
    for (let i = 0; i < 1_200 && stored === undefined; i++) {
      const rows = await t.db.dataSource.query('SELECT answer FROM ask_session_messages WHERE ask_id = $1', [askId]);
      if (rows.length) stored = rows[0].answer;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 300_000);

  afterAll(async () => {
    await t?.close();
    await upstream?.close();
  });

  /** One connection of the events route (no reconnect): every event it delivered until it ended. */
  async function read(lastEventId?: string): Promise<AskEvent[]> {
    const events: AskEvent[] = [];
    try {
      for await (const event of project.client.events(askId, { lastEventId })) events.push(event);
    } catch {
      // A dropped connection ends the read: what arrived is what the reader has.
    }
    return events;
  }
  const text = (events: AskEvent[]) =>
    events
      .filter((e) => e.type === 'delta')
      .map((e) => (e.data as { text: string }).text)
      .join('');

  it('stored the whole answer', () => {
    expect(stored).toBe(CHUNKS.join(''));
    expect(stored.length).toBe(16 * 1024 * 1024);
  });

  it('replays it from the start on one connection, to the terminal event, byte for byte', async () => {
    const events = await read();
    expect(events.at(-1)?.type).toBe('done');
    expect(events.filter((e) => e.type === 'reset')).toEqual([]);
    expect(text(events)).toBe(stored);
  });

  it('resumes it from a middle id on one connection: exactly the rest of the answer', async () => {
    const all = await read();
    const deltas = all.filter((e) => e.type === 'delta');
    const middle = deltas[Math.floor(deltas.length / 2)];
    const before = text(all.slice(0, all.indexOf(middle) + 1));
    const rest = await read(middle.id);
    expect(rest[0].id).toBe(all[all.indexOf(middle) + 1].id);
    expect(rest.at(-1)?.type).toBe('done');
    expect(before + text(rest)).toBe(stored);
    expect(text(rest).length).toBeGreaterThan(4 * 1024 * 1024);
  });

  it('logs no MaxListenersExceededWarning', () => {
    expect(t.logs().split('MaxListenersExceededWarning').length - 1).toBe(0);
  });
});
