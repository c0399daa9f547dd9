import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AskEvent, BudgetEvent, RetrievedItem } from '@ask/ask-contracts';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import { SessionsRepository } from '@ask/persistence';
import { localTokenizerCounter } from '@ask/token-counting';
import { SynthesisService } from './synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

/**
 * Issue 12 item 6, drift: the real SynthesisService against an OpenAI-wire fake upstream that counts
 * every request with a real tokenizer our estimate is not (Mistral's SentencePiece, bundled), made
 * 1.5× denser still, and rejects prompt + max_tokens > 8,192 with the disclosed figures; the project
 * says 16,384 (so the first ask also discloses the real window). Real text from the committed
 * fixtures (fixtures/data: oasst1-zh, UDHR; sources and licences there). A project calibrates on
 * Chinese, then runs a session in Hindi, Russian and Arabic each, and one that switches from Chinese
 * to Tamil mid-way: at most one upstream overflow per switch, every ask answered, the disclosed
 * window remembered and used after the first disclosure.
 */
describe('drift: calibration and overflow recovery under a change of script (fake upstream with a real tokenizer)', () => {
  jest.setTimeout(300_000);
  const MODEL = 'drift-gw';
  const REAL_WINDOW = 8192;
  const fixtures = join(__dirname, '..', '..', '..', '..', 'fixtures', 'data');
  let harness: SynthesisHarness;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let sessions: SessionsRepository;
  let service: SynthesisService;
  let projectId: string;

  /** Paragraphs of a UDHR translation, at least 80 characters each. */
  const udhr = (key: string) =>
    readFileSync(join(fixtures, 'text-udhr', `udhr_${key}.txt`), 'utf8')
      .split(/\n\s*\n|\n/)
      .map((p) => p.trim())
      .filter((p) => p.length >= 80);
  /** Instructions and outputs of the Chinese OpenAssistant excerpt. */
  const chinese = () => {
    const records = JSON.parse(readFileSync(join(fixtures, 'oasst1-zh', 'oaast_sft_zh.json'), 'utf8')) as Array<{
      instruction: string;
      output: string;
    }>;
    return records.flatMap((r) => [r.instruction, r.output]).filter((t) => t.length >= 80);
  };

  /**
   * One turn of a script: a question (a paragraph, at most 600 characters) and four retrieved items,
   * each `per` consecutive paragraphs, cut from the paragraphs after it (wrapping round).
   */
  const turns = (paragraphs: string[], n: number, offset = 0, per = 1) =>
    Array.from({ length: n }, (_, i) => {
      const at = (offset + i * (1 + 4 * per)) % paragraphs.length;
      const para = (j: number) => paragraphs[(at + j) % paragraphs.length];
      const items: RetrievedItem[] = [0, 1, 2, 3].map((k) => ({
        id: `i${at}-${k}`,
        kind: 'knowledge',
        title: `§${at + k}`,
        text: Array.from({ length: per }, (_, j) => para(1 + k * per + j)).join('\n'),
        score: 0.9 - k * 0.1,
      }));
      return { question: para(0).slice(0, 600), items };
    });

  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'drift-test',
      upstream: {
        chunkDelayMs: 0,
        enforce: { counter: localTokenizerCounter('mistral-spm'), promptScale: 1.5, windows: { [MODEL]: REAL_WINDOW } },
      },
    });
    ({ upstream, events, sessions, synthesis: service } = harness);
    const project = await harness.projects.create({
      name: 'drift',
      llmSettings: {
        provider: 'openai',
        model: MODEL,
        baseUrl: `${upstream.url}/v1`,
        contextWindow: 16_384,
        maxTokens: 1024,
      },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    projectId = project.id;
  });

  afterAll(() => harness?.close());

  interface SessionRun {
    asks: number;
    answered: number;
    overflows: number;
    budgets: BudgetEvent[][];
  }

  /** Runs the turns as one session; counts the chat requests the upstream received beyond one per ask. */
  async function session(list: Array<{ question: string; items: RetrievedItem[] }>): Promise<SessionRun> {
    const sessionId = (await sessions.create(projectId, 'drift')).id;
    const run: SessionRun = { asks: 0, answered: 0, overflows: 0, budgets: [] };
    for (const turn of list) {
      const before = upstream.requests.filter((r) => r.route === 'openai.chat').length;
      const askId = randomUUID();
      const acceptedAt = new Date().toISOString();
      await events.open(askId, { projectId, sessionId, acceptedAt });
      await service.synthesize(
        { askId, projectId, sessionId, question: turn.question, acceptedAt, items: turn.items },
        { attempt: 1 },
      );
      const evs: AskEvent[] = await events.readAll(askId);
      const calls = upstream.requests.filter((r) => r.route === 'openai.chat').length - before;
      run.asks += 1;
      if (evs.at(-1)?.type === 'done') run.answered += 1;
      run.overflows += calls - 1;
      run.budgets.push(evs.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent));
    }
    return run;
  }

  let calibration: SessionRun;
  const runs: Record<string, SessionRun> = {};

  it('calibrates on Chinese: one overflow (the real window disclosed), then the window is remembered and cjk calibrated', async () => {
    calibration = await session(turns(chinese(), 14));
    expect([calibration.asks, calibration.answered, calibration.overflows]).toEqual([14, 14, 1]);
    const disclosed = calibration.budgets.findIndex((plans) => plans.length === 2);
    expect(calibration.budgets[disclosed].map((b) => b.window)).toEqual([16_384, REAL_WINDOW]);
    for (const plans of calibration.budgets.slice(0, disclosed)) expect(plans.map((b) => b.window)).toEqual([16_384]);
    for (const plans of calibration.budgets.slice(disclosed + 1))
      expect(plans.map((b) => [b.window, b.rememberedWindow])).toEqual([[REAL_WINDOW, REAL_WINDOW]]);
    process.stdout.write(`DRIFT calibration disclosed at ask ${disclosed}\n`);
    expect(Object.keys(calibration.budgets.at(-1)?.[0].calibrationByScript ?? {})).toContain('cjk');
  });

  it.each([
    ['Hindi', 'hin'],
    ['Russian', 'rus'],
    ['Arabic', 'arb'],
  ])('a session in %s after it: at most one overflow (the switch), every ask answered', async (name, key) => {
    runs[name] = await session(turns(udhr(key), 8, 0, 3));
    process.stdout.write(
      `DRIFT ${name} overflows=${runs[name].overflows} used=${runs[name].budgets.map((p) => p.map((b) => b.used).join('/')).join(',')}\n`,
    );
    expect([runs[name].asks, runs[name].answered]).toEqual([8, 8]);
    expect(runs[name].overflows).toBeLessThanOrEqual(1);
    for (const plans of runs[name].budgets) expect(plans[0].window).toBe(REAL_WINDOW);
  });

  it('a session that switches from Chinese to Tamil mid-way: at most one overflow, every ask answered', async () => {
    const switched = await session([...turns(chinese(), 3, 200), ...turns(udhr('tam'), 4, 0, 3)]);
    process.stdout.write(
      `DRIFT switch overflows=${switched.overflows} used=${switched.budgets.map((p) => p.map((b) => b.used).join('/')).join(',')}\n`,
    );
    expect([switched.asks, switched.answered]).toEqual([7, 7]);
    expect(switched.overflows).toBeLessThanOrEqual(1);
    // The Chinese half planned with the learned cjk factor, as before the switch.
    expect(switched.budgets[0][0].calibrationByScript?.['cjk']).toBeGreaterThan(1);
  });

  it('never sent a request over the real window after its re-plan', () => {
    const chats = upstream.requests.filter((r) => r.route === 'openai.chat');
    const over = chats.filter((r) => (r.promptTokens as number) + 1024 > REAL_WINDOW).length;
    const totalOverflows = calibration.overflows + Object.values(runs).reduce((s, r) => s + r.overflows, 0);
    expect(over).toBeLessThanOrEqual(totalOverflows + 1);
  });
});
