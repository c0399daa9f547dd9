import { randomUUID } from 'node:crypto';
import { failedAttempt } from '@ask/event-stream';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

// Integration: an infrastructure failure (PostgreSQL gone) of a synthesis attempt, handled as the worker
// does (`JobProcessor.failedAttempt`): retried before the last attempt, the ask ended with a typed 500
// whose error id is the logged one on the last.
describe('a failed synthesis attempt (SynthesisService with the worker’s failedAttempt)', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  let ids: { projectId: string; sessionId: string };
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'last-attempt' });
    const project = await harness.projects.create({ name: 'p', llmSettings: { provider: 'local', model: 'local' } });
    ids = { projectId: project.id, sessionId: (await harness.sessions.create(project.id, 's')).id };
    // Every later query fails as when the database is unreachable: an infrastructure fault, not a typed one.
    await harness.db.dataSource.destroy();
  });
  afterAll(() => harness.close());

  async function attempt(attemptsMade: number) {
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    await harness.events.open(askId, { ...ids, acceptedAt });
    const lines: string[] = [];
    const job = { attemptsMade, opts: { attempts: 3 } };
    const outcome = await harness.synthesis
      .synthesize(
        { askId, ...ids, question: 'Q?', acceptedAt, items: [] },
        {
          attempt: attemptsMade + 1,
          failed: (err, end) => failedAttempt(job, `ask ${askId}: synthesis`, err, (l) => lines.push(l), end),
        },
      )
      .then(
        () => 'resolved',
        (err: Error) => err.message,
      );
    return { askId, outcome, lines, events: await harness.events.readAll(askId) };
  }

  it('is logged and rethrown before the last attempt, the ask left open for the retry', async () => {
    const { askId, outcome, lines, events } = await attempt(0);
    expect(outcome).not.toBe('resolved');
    expect(lines).toEqual([`ask ${askId}: synthesis: attempt 1 failed: ${outcome}`]);
    expect(events.map((e) => e.type)).toEqual([]);
  });

  it('ends the ask on the last attempt with one 500 internal_error whose error id is the logged one', async () => {
    const { askId, outcome, lines, events } = await attempt(2);
    expect(outcome).not.toBe('resolved');
    const errors = events.filter((e) => e.type === 'error').map((e) => e.data as { code: string; details?: string });
    const id = /^error_id=([0-9a-f-]{36})$/.exec(errors[0]?.details ?? '')?.[1];
    expect([events.map((e) => e.type), errors[0]?.code, lines]).toEqual([
      ['error'],
      'internal_error',
      [`ask ${askId}: synthesis: last attempt 3 failed (error_id=${id}): ${outcome}`],
    ]);
  });
});
