import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { AskClient } from '@ask/ask-client';
import type { BudgetEvent } from '@ask/ask-contracts';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  ApiKeysRepository,
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import { launchBrowser } from './support/browser';
import { removeTestKeys } from '@ask/testing';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The small real knowledge base: pgvector's README and CHANGELOG, committed in fixtures/data (source, licence: its README). */
const KB = resolve(ROOT, 'fixtures', 'data', 'kb-pgvector');
const SCREENSHOT = resolve(ROOT, 'tmp', 'artifacts', 'dashboard-picture.png');
/** A price for the local stand-in (it is free by default), so every cost on the page is a real, non-zero figure. */
const PRICE = [
  { model: '^local$', provider: 'local', input: 1.25, cacheRead: 0.125, cacheWrite: 0, output: 10, source: 'spec' },
];
const QUESTIONS = [
  'How do I create an HNSW index with pgvector?',
  'Which distance functions can that index use?',
  'How do I tune the ef_search parameter for better recall?',
  'Does pgvector support halfvec?',
  'What is the difference between IVFFlat and HNSW indexes?',
  'How many dimensions can a vector have?',
  'How do I install pgvector on Linux?',
  'How do I store sparse vectors with sparsevec?',
  'What do iterative index scans change when filtering?',
  'What does the binary_quantize function do?',
  'How do I use cosine distance in an ORDER BY?',
];

/** Sums decimal USD strings exactly (pico-dollars as BigInt), independently of PostgreSQL and the page. */
function sumUsd(values: Array<string | null>): string {
  const pico = values.reduce((s, v) => s + (v === null ? 0n : BigInt(v.replace('.', ''))), 0n);
  const digits = pico.toString().padStart(13, '0');
  return `${digits.slice(0, -12)}.${digits.slice(-12)}`;
}

interface CallRow {
  ask_id: string | null;
  purpose: string;
  day: string;
  model: string;
  input_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: string | null;
}

/** The figures the page must show for a set of ledger rows, as its data attributes spell them. */
function figures(rows: CallRow[]): Record<string, string> {
  const sum = (k: keyof CallRow) => String(rows.reduce((s, r) => s + Number(r[k] ?? 0), 0));
  return {
    calls: String(rows.length),
    inputTokens: sum('input_tokens'),
    cacheReadTokens: sum('cache_read_tokens'),
    cacheWriteTokens: sum('cache_write_tokens'),
    outputTokens: sum('output_tokens'),
    reasoningTokens: sum('reasoning_tokens'),
    costUsd: sumUsd(rows.map((r) => r.cost_usd)),
    unpricedCalls: String(rows.filter((r) => r.cost_usd === null).length),
  };
}

const FIGURE_KEYS = Object.keys(figures([]));
const pick = (data: Record<string, string | undefined>, keys: string[]) =>
  Object.fromEntries(keys.map((k) => [k, data[k]]));

// Issue 17 item 7: the session picture and the project usage view, drawn in headless Chromium from the
// real stack, checked bar by bar against the rows in PostgreSQL.
describe('the session picture and the project usage view', () => {
  let db: TestDatabase;
  let stack: Stack;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let projectId: string;
  let projectKey: string;
  let sessionId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    // A 1,280-token window with 2 context items (available 600 after max_tokens 16, the reserve of 600
    // and the 5% margin): by turn 4 older turns ride as summaries and some are dropped. (At 2,048 the
    // joint planner kept every turn's summary through 11 turns, so the picture had no dropped bar.)
    const project = await projects.create({
      name: 'picture',
      llmSettings: { provider: 'local', model: 'local', maxContextTokens: 1280, maxTokens: 16 },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: 2,
    });
    projectId = project.id;
    projectKey = (await new ApiKeysRepository(db.dataSource).create(projectId, 'picture spec')).key;
    await new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource)).ingest(
      projectId,
      await loadDocuments(KB),
      new LocalEmbeddingProvider(),
    );
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `picture-${randomUUID()}`,
        ASK_EVENTS_SECRET: randomBytes(32).toString('base64url'),
        ASK_PRICE_OVERRIDES: JSON.stringify(PRICE),
        LOG_LEVEL: 'warn',
      },
    });
    // The session, through the API; each pair's summary is stored before the next ask, so memory can use it.
    const client = new AskClient(stack.gatewayUrl, projectKey);
    let id: string | undefined;
    for (const question of QUESTIONS) {
      const outcome = await client.askAndWait(projectId, question, { sessionId: id });
      expect(outcome.events[outcome.events.length - 1].type).toBe('done');
      id = outcome.sessionId;
      for (let i = 0; i < 100; i += 1) {
        const [{ missing }] = await db.dataSource.query(
          `SELECT count(*)::int AS missing FROM ask_session_messages m
             WHERE m.session_id = $1 AND NOT EXISTS (SELECT 1 FROM turn_summaries t WHERE t.message_id = m.id)`,
          [id],
        );
        if (missing === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    sessionId = id as string;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(`${stack.gatewayUrl}/`);
    await page.getByLabel('Project').fill(projectId);
    await page.getByLabel('API key').fill(projectKey);
    await page.getByRole('button', { name: 'Open project' }).click();
    await page.locator(`button.session-open[data-session-id="${sessionId}"]`).click();
    await page
      .locator('[data-role=session-picture] .bar')
      .nth(QUESTIONS.length - 1)
      .waitFor();
    await page.locator('[data-role=project-usage]').waitFor();
    mkdirSync(resolve(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await db?.drop();
  });

  afterEach(() => expect(pageErrors).toEqual([]));

  const datasets = (selector: string) =>
    page.locator(selector).evaluateAll((nodes) => nodes.map((n) => ({ ...(n as SVGElement | HTMLElement).dataset })));

  const calls = (where: string, params: unknown[]): Promise<CallRow[]> =>
    db.dataSource.query(
      `SELECT ask_id, purpose, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, provider || '/' || requested_model AS model,
              input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_usd::text
         FROM provider_calls WHERE ${where}`,
      params,
    );

  it('draws one bar per stored turn with exactly its stored budget: used, window, input limit, reported prompt tokens, dropped and summarised turns', async () => {
    const messages: Array<{ id: string; ask_id: string; prompt_tokens: number | null; budget: BudgetEvent }> =
      await db.dataSource.query(
        'SELECT id, ask_id, prompt_tokens, budget FROM ask_session_messages WHERE session_id = $1 ORDER BY created_at, id',
        [sessionId],
      );
    expect(messages.length).toBe(QUESTIONS.length);
    const newest = messages[messages.length - 1].budget.memory;
    const fate = (turn: number) => {
      if (turn === messages.length) return 'latest';
      const inside = (ranges: Array<[number, number]> = []) => ranges.some(([a, b]) => turn >= a && turn <= b);
      return (
        (['verbatim', 'summarised', 'compacted', 'dropped'] as const).find((k) => inside(newest?.[k])) ?? 'unknown'
      );
    };
    const bars = await datasets('[data-role=session-picture] .bar');
    expect(
      bars.map((b) =>
        pick(b, [
          'turn',
          'askId',
          'used',
          'window',
          'inputLimit',
          'promptTokens',
          'turnsDropped',
          'dropped',
          'summarised',
          'compacted',
          'fate',
        ]),
      ),
    ).toEqual(
      messages.map((m, i) => ({
        turn: String(i + 1),
        askId: m.ask_id,
        used: String(m.budget.used),
        window: String(m.budget.window),
        inputLimit: String(m.budget.window - m.budget.maxTokens - m.budget.margin),
        promptTokens: m.prompt_tokens === null ? '' : String(m.prompt_tokens),
        turnsDropped: String(m.budget.turnsDropped),
        dropped: JSON.stringify(m.budget.memory?.dropped ?? []),
        summarised: JSON.stringify(m.budget.memory?.summarised ?? []),
        compacted: JSON.stringify(m.budget.memory?.compacted ?? []),
        fate: fate(i + 1),
      })),
    );
    // The setup's premise: this session has turns summarised by one prompt and dropped by another.
    expect(messages.some((m) => (m.budget.memory?.summarised.length ?? 0) > 0)).toBe(true);
    // No planned prompt (system prompt included) crosses its input limit: the dashed line is a ceiling.
    const over = messages.filter((m) => m.budget.used > m.budget.window - m.budget.maxTokens - m.budget.margin);
    expect(over.map((m) => m.id)).toEqual([]);
    expect(messages.some((m) => (m.budget.memory?.dropped.length ?? 0) > 0)).toBe(true);
    expect(bars.some((b) => b['fate'] === 'dropped')).toBe(true);
    // Readable numbers beside the bars: each bar's planned tokens as text, its marks under it.
    const texts = await page.locator('[data-role=session-picture] .bar').evaluateAll((nodes) =>
      nodes.map((n) => ({
        value: n.querySelector('.bar-value')?.textContent,
        marks: Array.from(n.querySelectorAll('.bar-mark')).map((t) => t.textContent),
      })),
    );
    const ranges = (r: Array<[number, number]>) => r.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
    expect(texts).toEqual(
      messages.map((m) => ({
        value: m.budget.used.toLocaleString('en-US'),
        marks: [
          ...(m.budget.memory?.dropped.length ? [`✕ ${ranges(m.budget.memory.dropped)}`] : []),
          ...(m.budget.memory?.summarised.length ? [`≈ ${ranges(m.budget.memory.summarised)}`] : []),
          ...(m.budget.memory?.compacted.length ? [`⊂ ${ranges(m.budget.memory.compacted)}`] : []),
        ],
      })),
    );
  });

  it("gives each bar its ask's ledger figures and the session its totals, exactly the provider_calls rows", async () => {
    const rows = await calls('project_id = $1 AND session_id = $2', [projectId, sessionId]);
    expect(rows.length).toBeGreaterThanOrEqual(QUESTIONS.length);
    // The answers carry the test price (the embedding calls of the stand-in embedder are free, and rows too).
    const answers = rows.filter((r) => r.purpose === 'answer');
    expect(answers.length).toBe(QUESTIONS.length);
    expect(answers.every((r) => r.cost_usd !== null && Number(r.cost_usd) > 0)).toBe(true);
    const bars = await datasets('[data-role=session-picture] .bar');
    expect(bars.map((b) => pick(b, FIGURE_KEYS))).toEqual(
      bars.map((b) => figures(rows.filter((r) => r.ask_id === b['askId']))),
    );
    const [totals] = await datasets('[data-role=session-totals]');
    expect(pick(totals, FIGURE_KEYS)).toEqual(figures(rows));
    expect(await page.locator('[data-role=session-totals] dd').last().getAttribute('title')).toBe(
      `USD ${figures(rows)['costUsd']}`,
    );
  });

  it('names the chart and every bar for a screen reader', async () => {
    const chart = page.locator('#session-chart');
    expect(await chart.getAttribute('role')).toBe('group');
    expect(await page.locator('#session-chart-title').textContent()).toBe(
      'Prompt tokens per turn against the context window',
    );
    const labels = await page
      .locator('[data-role=session-picture] .bar')
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('aria-label')));
    const bars = await datasets('[data-role=session-picture] .bar');
    for (const [i, label] of labels.entries()) {
      const b = bars[i];
      expect(label).toContain(
        `Turn ${i + 1}: prompt ${Number(b['used']).toLocaleString('en-US')} of ${Number(b['window']).toLocaleString('en-US')} tokens (input limit ${Number(b['inputLimit']).toLocaleString('en-US')})`,
      );
    }
  });

  it('shows tokens and cost per day and per model, each bar and the totals exactly the rows of its range', async () => {
    const [view] = await datasets('[data-role=project-usage]');
    const rows = await calls('project_id = $1 AND started_at >= $2 AND started_at < $3', [
      projectId,
      view['from'],
      view['to'],
    ]);
    const keysOf = (k: 'day' | 'model') => [...new Set(rows.map((r) => r[k]))].sort();
    for (const [role, k] of [
      ['usage-by-day', 'day'],
      ['usage-by-model', 'model'],
    ] as const) {
      const bars = await datasets(`[data-role=${role}] .usage-bar`);
      expect(bars.map((b) => ({ key: b['key'], ...pick(b, FIGURE_KEYS) }))).toEqual(
        keysOf(k).map((key) => ({ key, ...figures(rows.filter((r) => r[k] === key)) })),
      );
    }
    expect(keysOf('model')).toContain('local/local');
    const [totals] = await datasets('[data-role=project-totals]');
    expect(pick(totals, FIGURE_KEYS)).toEqual(figures(rows));
  });

  it('fits 375 px (the session chart scrolls inside its own box)', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    await page.screenshot({ path: resolve(SCREENSHOT, '..', 'dashboard-picture-375px.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(overflow).toBeLessThanOrEqual(375);
  });
});
