import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AskEvent, BudgetEvent, RetrievedItem } from '@ask/ask-contracts';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import { ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { localTokenizerCounter } from '@ask/token-counting';
import { SynthesisService } from './synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

/**
 * Issue 26 item 2: one tenant never moves another's budget. The real SynthesisService against an
 * OpenAI-wire fake upstream that counts every request with a real tokenizer our estimate is not
 * (Mistral's SentencePiece, bundled) and rejects prompt + max_tokens > 8,192. Two projects on ONE
 * model id, their asks interleaved one for one, in two languages of one script class (English and
 * German: Latin; Bengali and Tamil: Indic; Japanese and Chinese: CJK), against each project alone on
 * a model id of its own. Real text: UDHR translations from the committed fixtures (fixtures/data/
 * text-udhr, source and licence there). Each project's plans are the same as alone, ask for ask,
 * and no request is over the window or planned more than the margin under its true size.
 */
describe('calibration per project: two tenants on one model id (fake upstream with a real tokenizer)', () => {
  jest.setTimeout(600_000);
  const WINDOW = 8192;
  const MAX_TOKENS = 1024;
  const ASKS = 12;
  const PAIRS = [
    ['eng', 'deu_1996'],
    ['ben', 'tam'],
    ['jpn', 'cmn_hans'],
  ] as const;
  const fixtures = join(__dirname, '..', '..', '..', '..', 'fixtures', 'data');
  let harness: SynthesisHarness;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let service: SynthesisService;

  /** Paragraphs of a UDHR translation, at least 80 characters each. */
  const udhr = (key: string) =>
    readFileSync(join(fixtures, 'text-udhr', `udhr_${key}.txt`), 'utf8')
      .split(/\n\s*\n|\n/)
      .map((p) => p.trim())
      .filter((p) => p.length >= 80);

  /** Turn i: a question (a paragraph, ≤ 600 characters) and four items of two paragraphs each, after it. */
  const turns = (paragraphs: string[]) =>
    Array.from({ length: ASKS }, (_, i) => {
      const at = (i * 9) % paragraphs.length;
      const para = (j: number) => paragraphs[(at + j) % paragraphs.length];
      const items: RetrievedItem[] = [0, 1, 2, 3].map((k) => ({
        id: `i${at}-${k}`,
        kind: 'knowledge',
        title: `§${at + k}`,
        text: `${para(1 + 2 * k)}\n${para(2 + 2 * k)}`,
        score: 0.9 - k * 0.1,
      }));
      return { question: para(0).slice(0, 600), items };
    });

  const models = PAIRS.flatMap(([a, b]) => [`alone-${a}`, `alone-${b}`, `shared-${a}-${b}`]);

  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'tenant-test',
      upstream: {
        chunkDelayMs: 0,
        enforce: {
          counter: localTokenizerCounter('mistral-spm'),
          windows: Object.fromEntries(models.map((m) => [m, WINDOW])),
        },
      },
    });
    ({ upstream, events, projects, sessions, synthesis: service } = harness);
  });

  afterAll(() => harness?.close());

  /** A project on `model` with one session. */
  async function tenant(model: string) {
    const project = await projects.create({
      name: model,
      llmSettings: {
        provider: 'openai',
        model,
        baseUrl: `${upstream.url}/v1`,
        contextWindow: WINDOW,
        maxTokens: MAX_TOKENS,
      },
    });
    return { projectId: project.id, sessionId: (await sessions.create(project.id, model)).id };
  }

  /** What one ask planned (its budget events, without the model id) and what the upstream counted. */
  interface Turn {
    plans: Array<Omit<BudgetEvent, 'model' | 'keptTurnIds'> & { keptTurns: number }>;
    /** Prompt tokens the upstream counted for each chat request of the ask. */
    truth: number[];
    done: boolean;
  }

  async function ask(
    ids: { projectId: string; sessionId: string },
    turn: { question: string; items: RetrievedItem[] },
  ): Promise<Turn> {
    const before = upstream.requests.length;
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    await events.open(askId, { ...ids, acceptedAt });
    await service.synthesize({ askId, ...ids, question: turn.question, acceptedAt, items: turn.items }, { attempt: 1 });
    const evs: AskEvent[] = await events.readAll(askId);
    return {
      plans: evs
        .filter((e) => e.type === 'budget')
        .map((e) => {
          const { model: _model, keptTurnIds, ...plan } = e.data as BudgetEvent;
          return { ...plan, keptTurns: keptTurnIds.length };
        }),
      truth: upstream.requests
        .slice(before)
        .filter((r) => r.route === 'openai.chat')
        .map((r) => r.promptTokens as number),
      done: evs.at(-1)?.type === 'done',
    };
  }

  it.each(PAIRS)(
    '%s and %s: each project plans exactly as alone, 0 overflows, 0 plans under the truth by more than the margin',
    async (a, b) => {
      const [textA, textB] = [turns(udhr(a)), turns(udhr(b))];
      const aloneA = await tenant(`alone-${a}`);
      const aloneB = await tenant(`alone-${b}`);
      const sharedA = await tenant(`shared-${a}-${b}`);
      const sharedB = await tenant(`shared-${a}-${b}`);
      const alone: Record<'a' | 'b', Turn[]> = { a: [], b: [] };
      const shared: Record<'a' | 'b', Turn[]> = { a: [], b: [] };
      for (let i = 0; i < ASKS; i += 1) alone.a.push(await ask(aloneA, textA[i]));
      for (let i = 0; i < ASKS; i += 1) alone.b.push(await ask(aloneB, textB[i]));
      for (let i = 0; i < ASKS; i += 1) {
        shared.a.push(await ask(sharedA, textA[i]));
        shared.b.push(await ask(sharedB, textB[i]));
      }
      const all = [...alone.a, ...alone.b, ...shared.a, ...shared.b];
      const overflows = all.reduce((n, t) => n + t.truth.length - 1, 0);
      // planned ÷ true below 1 − margin ÷ used would have spent more than the margin.
      const under = all.filter((t) => t.truth[0] > t.plans[0].used + t.plans[0].margin).length;
      const calibrated = (turnsOf: Turn[]) =>
        turnsOf.findIndex((t) => Object.keys(t.plans[0].calibrationByScript ?? {}).length > 0) + 1;
      process.stdout.write(
        `TENANT ${a}/${b} overflows=${overflows} under=${under} calibrated at ask ${calibrated(shared.a)}/${calibrated(shared.b)} ` +
          `factors ${JSON.stringify(shared.a.at(-1)?.plans[0].calibrationByScript)} ${JSON.stringify(shared.b.at(-1)?.plans[0].calibrationByScript)} ` +
          `max fill ${Math.max(...all.map((t) => (t.truth.at(-1) as number) + MAX_TOKENS)) / WINDOW}\n`,
      );
      expect(shared.a).toEqual(alone.a);
      expect(shared.b).toEqual(alone.b);
      expect(all.every((t) => t.done)).toBe(true);
      expect([overflows, under]).toEqual([0, 0]);
      // Each project calibrated from its own asks within them.
      expect(calibrated(shared.a)).toBeGreaterThan(0);
      expect(calibrated(shared.b)).toBeGreaterThan(0);
    },
  );
});
