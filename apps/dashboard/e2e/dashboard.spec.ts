import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { AskClient } from '@ask/ask-client';
import type { AskEvent, BudgetEvent } from '@ask/ask-contracts';
import { AskErrorCode, DASHBOARD_COPY } from '@ask/ask-errors';
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
import { CuttingProxy } from './support/cutting-proxy';
import { removeTestKeys } from '@ask/testing';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The small real knowledge base: pgvector's README and CHANGELOG, committed in fixtures/data (source, licence: its README). */
const KB = resolve(ROOT, 'fixtures', 'data', 'kb-pgvector');
const SCREENSHOT = resolve(ROOT, 'tmp', 'artifacts', 'dashboard-session.png');
const LOCAL_EMBEDDING = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;
const LOCAL_LLM = { provider: 'local', model: 'local' } as const;

interface Accepted {
  askId: string;
  sessionId: string;
  eventsUrl: string;
}

describe('the dashboard in headless Chromium, against the real stack', () => {
  let db: TestDatabase;
  let stack: Stack;
  let proxy: CuttingProxy;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let projects: ProjectsRepository;
  let keys: ApiKeysRepository;
  let projectId: string;
  let projectKey: string;
  const pageErrors: string[] = [];
  let pageResponse: Awaited<ReturnType<Page['goto']>>;
  const cspViolations: string[] = [];
  /** Every console error of the page (a failed request's status is one), and every request it made. */
  const consoleErrors: string[] = [];
  const requests: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    keys = new ApiKeysRepository(db.dataSource);
    const project = await projects.create({
      name: 'dashboard',
      llmSettings: LOCAL_LLM,
      embeddingSettings: LOCAL_EMBEDDING,
      topK: 6,
    });
    projectId = project.id;
    projectKey = (await keys.create(projectId, 'dashboard spec')).key;
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    await ingestion.ingest(projectId, await loadDocuments(KB), new LocalEmbeddingProvider());
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `dashboard-${randomUUID()}`,
        ASK_EVENTS_SECRET: randomBytes(32).toString('base64url'),
        LOCAL_LLM_CHUNK_DELAY_MS: '30',
        LOG_LEVEL: 'warn',
      },
    });
    proxy = await new CuttingProxy(new URL(stack.gatewayUrl)).start();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    // The gateway's Content-Security-Policy (helmet) must not block anything the dashboard needs.
    // Chromium reports each violation on the console ("Refused to … Content Security Policy …"); the
    // init script reports the DOM's securitypolicyviolation events there too, on every page load.
    page.on('console', (message) => {
      if (/Content Security Policy|csp-violation/.test(message.text())) cspViolations.push(message.text());
      if (message.type() === 'error') consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
    page.on('request', (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`csp-violation ${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    pageResponse = await page.goto(`${proxy.url}/`);
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await db?.drop();
  });

  afterEach(() => expect(pageErrors).toEqual([]));

  const storedAnswer = async (askId: string): Promise<string> => {
    const [row] = await db.dataSource.query('SELECT answer FROM ask_session_messages WHERE ask_id = $1', [askId]);
    return row.answer;
  };

  /** The ask's events read back from the gateway on their own (not through the page). */
  const eventsOf = async (accepted: Accepted, key: string): Promise<AskEvent[]> => {
    const events: AskEvent[] = [];
    for await (const event of new AskClient(stack.gatewayUrl, key).events(accepted.askId, {
      eventsUrl: accepted.eventsUrl,
    }))
      events.push(event);
    return events;
  };

  const openProject = async (id: string, key: string) => {
    await page.getByLabel('Project').fill(id);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Open project' }).click();
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
  };

  const turn = (n: number) => page.locator(`#turns > li:nth-child(${n})`);
  /** The answer's own text (its Markdown as streamed and stored), which the page renders as HTML. */
  const answerText = async (n: number): Promise<string> =>
    (await turn(n).locator('[data-role=answer]').getAttribute('data-markdown')) ?? '';

  /**
   * Asks through the page and records the answer's length (its Markdown) at every DOM change while it streams.
   * @returns the 202 body the page received, and the lengths seen.
   */
  const askOnPage = async (question: string, n: number): Promise<{ accepted: Accepted; lengths: number[] }> => {
    await page.evaluate((index) => {
      const w = window as unknown as { __lengths: number[]; __observer?: MutationObserver };
      w.__observer?.disconnect();
      w.__lengths = [];
      w.__observer = new MutationObserver(() => {
        const answer = document.querySelector(`#turns > li:nth-child(${index}) [data-role=answer]`);
        if (answer) w.__lengths.push(answer.getAttribute('data-markdown')?.length ?? 0);
      });
      w.__observer.observe(document.getElementById('turns') as HTMLElement, {
        childList: true,
        subtree: true,
        characterData: true,
        attributes: true,
        attributeFilter: ['data-markdown'],
      });
    }, n);
    const response = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/ask'));
    await page.getByLabel('Your question').fill(question);
    await page.getByRole('button', { name: 'Ask' }).click();
    const accepted = (await (await response).json()) as Accepted;
    await page
      .locator(`#turns > li:nth-child(${n})[data-status=done], #turns > li:nth-child(${n})[data-status=error]`)
      .waitFor();
    const lengths = await page.evaluate(() => (window as unknown as { __lengths: number[] }).__lengths);
    return { accepted, lengths };
  };

  describe('a 3-turn session', () => {
    const questions = [
      'How do I create an HNSW index with pgvector?',
      'Which distance functions can that index use?',
      'How do I tune the ef_search parameter for better recall?',
    ];
    const turns: Array<{ accepted: Accepted; lengths: number[]; budget: BudgetEvent; answer: string }> = [];

    beforeAll(async () => {
      await openProject(projectId, projectKey);
      for (const [i, question] of questions.entries()) {
        const { accepted, lengths } = await askOnPage(question, i + 1);
        const budgets = (await eventsOf(accepted, projectKey)).filter((e) => e.type === 'budget');
        const badge = await page.locator('#token-badge-value').textContent();
        const dataset = await page.locator('#token-badge').evaluate((node: HTMLElement) => ({ ...node.dataset }));
        const budget = budgets[budgets.length - 1].data as BudgetEvent;
        expect({ badge, dataset }).toEqual({
          badge: `${budget.used.toLocaleString('en-US')} / ${budget.window.toLocaleString('en-US')}`,
          dataset: { used: String(budget.used), window: String(budget.window) },
        });
        turns.push({
          accepted,
          lengths,
          budget,
          answer: await answerText(i + 1),
        });
      }
      mkdirSync(resolve(SCREENSHOT, '..'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
    });

    it('streams each answer: the text grows over several steps before it is complete', () => {
      for (const { lengths, answer } of turns) {
        const growing = lengths.filter(
          (length, i) => length > 0 && length < answer.length && length > (lengths[i - 1] ?? 0),
        );
        expect(growing.length).toBeGreaterThanOrEqual(3);
        expect(lengths[lengths.length - 1]).toBe(answer.length);
      }
    });

    it('shows exactly the stored answers, in one session', async () => {
      const sessionId = turns[0].accepted.sessionId;
      expect(turns.map((t) => t.accepted.sessionId)).toEqual([sessionId, sessionId, sessionId]);
      for (const t of turns) expect(t.answer).toBe(await storedAnswer(t.accepted.askId));
      expect(turns[2].answer.split('\n')[0]).toBe('(Follow-up; this prompt carried 2 earlier turns.)');
    });

    it('renders each answer as Markdown: a fenced code block as <pre><code>, no literal fences', async () => {
      // The stand-in quotes pgvector's README, whose SQL comes in ```sql fences.
      const fenced = turns.findIndex((t) => /```sql\n/.test(t.answer));
      expect(fenced).toBeGreaterThanOrEqual(0);
      const answer = turn(fenced + 1).locator('[data-role=answer]');
      // The fence's SQL lines, less the list item's indentation that Markdown strips.
      const sqlLines = (text: string) =>
        text
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean);
      const firstFence = /```sql\n([\s\S]*?)```/.exec(turns[fenced].answer)?.[1] ?? '';
      const block = answer.locator('pre > code.language-sql').first();
      // The fence is one of the README's own ```sql blocks (which one depends on the ranking), not empty.
      const readmeFences = readdirSync(KB)
        .map((file) => readFileSync(resolve(KB, file), 'utf8'))
        .flatMap((text) => [...text.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => sqlLines(m[1]).join('\n')));
      expect(sqlLines(firstFence).length).toBeGreaterThan(0);
      expect(readmeFences).toContain(sqlLines(firstFence).join('\n'));
      expect(sqlLines((await block.textContent()) ?? '')).toEqual(sqlLines(firstFence));
      expect(await block.evaluate((node) => getComputedStyle(node).fontFamily)).toMatch(/mono/i);
      expect(await block.evaluate((node) => getComputedStyle(node.parentElement as Element).overflowX)).toBe('auto');
      for (const n of [1, 2, 3]) {
        const text = await turn(n).locator('[data-role=answer]').textContent();
        expect(text).not.toContain('```');
        expect(await turn(n).locator('[data-role=answer] script, [data-role=answer] [style]').count()).toBe(0);
      }
    });

    it("shows each turn's budget in plain words and its sources under the answer", async () => {
      for (const [i, { budget }] of turns.entries()) {
        const line = await turn(i + 1)
          .locator('[data-role=budget]')
          .textContent();
        expect(line).toContain(
          `Prompt ${budget.used.toLocaleString('en-US')} of ${budget.window.toLocaleString('en-US')} tokens`,
        );
        expect(line).toContain(`carried ${budget.turnsKept} earlier turn`);
        // One entry per page: the knowledge base is 4 files (README, CHANGELOG, LICENSE, SOURCE), each
        // ingested as several chunks, and no page is listed twice.
        const listed = await turn(i + 1)
          .locator('[data-role=sources] li')
          .allTextContents();
        expect(listed.length).toBeGreaterThan(0);
        expect(listed.length).toBeLessThanOrEqual(4);
        expect(new Set(listed).size).toBe(listed.length);
      }
      expect(turns.map((t) => t.budget.turnsKept)).toEqual([0, 1, 2]);
    });

    it("shows each turn's memory line: which earlier turns rode verbatim (issue 16)", async () => {
      expect(await turn(1).locator('[data-role=memory]').count()).toBe(0);
      expect(await turn(2).locator('[data-role=memory]').textContent()).toBe('Memory: turn 1 verbatim.');
      expect(await turn(3).locator('[data-role=memory]').textContent()).toBe('Memory: turns 1–2 verbatim.');
      expect(turns.map((t) => t.budget.memory?.mode)).toEqual(['per-turn', 'per-turn', 'per-turn']);
    });

    it('lists the session and reopens it with its 3 turns', async () => {
      const sessionId = turns[0].accepted.sessionId;
      const row = page.locator(`button.session-open[data-session-id="${sessionId}"]`);
      await expect(row.textContent()).resolves.toContain('3 turns');
      await expect(row.textContent()).resolves.toContain(questions[0]);
      // The whole first question on hover, and on screen up to two lines rather than one cut line.
      expect(await row.getAttribute('title')).toBe(questions[0]);
      // Clamped at two lines (not one cut line); how much of the question two lines hold depends on the font.
      expect(
        await row.locator('.session-title').evaluate((node: HTMLElement) => getComputedStyle(node).webkitLineClamp),
      ).toBe('2');
      await page.getByRole('button', { name: 'New chat' }).click();
      expect(await page.locator('#turns > li').count()).toBe(0);
      expect(await page.locator('#token-badge-value').textContent()).toBe('– / –');
      await row.click();
      await page.locator('#turns > li:nth-child(3)').waitFor();
      expect(await page.locator('#turns [data-role=question]').allTextContents()).toEqual(
        questions.map((q) => `You asked: ${q}`),
      );
      expect(
        await page
          .locator('#turns [data-role=answer]')
          .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-markdown'))),
      ).toEqual(turns.map((t) => t.answer));
      expect(await row.getAttribute('aria-current')).toBe('true');
    });

    it('has a label for every field, a polite live region for the answer, and fits 375 px', async () => {
      const unlabelled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('input, textarea'))
          .filter((node) => (node as HTMLInputElement).labels?.length === 0)
          .map((n) => n.id),
      );
      expect(unlabelled).toEqual([]);
      expect(await page.locator('#turns').getAttribute('aria-live')).toBe('polite');
      await page.setViewportSize({ width: 375, height: 800 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
      await page.screenshot({ path: resolve(SCREENSHOT, '..', 'dashboard-375px.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
      expect(overflow).toBeLessThanOrEqual(375);
    });

    it('continues the reopened session with a follow-up and deletes it', async () => {
      // The list refresh after the answer ends is held until the first delete click: the redraw it
      // brings must keep the pending confirmation (before, a slow refresh reset it under the pointer).
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      const sessionsList = /\/api\/v1\/projects\/[^/]+\/sessions$/;
      await page.route(sessionsList, async (route) => {
        await held;
        await route.continue();
      });
      const redrawn = page.waitForResponse((r) => r.request().method() === 'GET' && sessionsList.test(r.url()));
      const { accepted } = await askOnPage('Does pgvector support halfvec?', 4);
      expect(accepted.sessionId).toBe(turns[0].accepted.sessionId);
      expect(await answerText(4)).toBe(await storedAnswer(accepted.askId));
      await page
        .getByRole('button', { name: /^Delete session/ })
        .first()
        .click();
      release();
      await redrawn;
      await page.unroute(sessionsList);
      await page.locator('button.session-open small', { hasText: '4 turns' }).first().waitFor();
      await page.getByRole('button', { name: /^Confirm: delete session/ }).click();
      await page.locator(`button.session-open[data-session-id="${accepted.sessionId}"]`).waitFor({ state: 'detached' });
      const [{ count }] = await db.dataSource.query(
        'SELECT count(*)::int AS count FROM ask_session_messages WHERE session_id = $1',
        [accepted.sessionId],
      );
      expect(count).toBe(0);
    });
  });

  // The typed-error cases below answer 4xx on purpose, which Chromium logs as console errors.
  it('logged no console error while it opened a project, streamed, reopened and deleted a session', () => {
    expect(consoleErrors).toEqual([]);
  });

  describe('typed errors, with the copy chosen by code', () => {
    it('names the missing LLM provider for a project without one (412)', async () => {
      const bare = await projects.create({ name: 'no llm', embeddingSettings: LOCAL_EMBEDDING });
      await openProject(bare.id, (await keys.create(bare.id, 'dashboard spec')).key);
      await askOnPage('Anything?', 1);
      const error = turn(1).locator('[data-role=error]');
      expect(await error.getAttribute('data-code')).toBe('llm_not_configured');
      expect(await error.locator('.error-copy').textContent()).toBe(DASHBOARD_COPY[AskErrorCode.LlmNotConfigured]);
      expect(await error.locator('.error-copy').textContent()).toContain('no LLM provider');
      expect(await error.locator('details').getAttribute('open')).toBeNull();
      await error.getByText('What happened').click();
      await expect(error.locator('details dl').textContent()).resolves.toContain('412');
    });

    it('says to start a new chat or switch model when the question does not fit the window (413)', async () => {
      // A window capped at 1,024 tokens leaves 357 for the prompt; the question alone is about 700.
      const small = await projects.create({
        name: 'small window',
        llmSettings: { ...LOCAL_LLM, maxContextTokens: 1024, maxTokens: 16 },
        embeddingSettings: LOCAL_EMBEDDING,
      });
      await openProject(small.id, (await keys.create(small.id, 'dashboard spec')).key);
      await askOnPage('向量索引如何工作？'.repeat(100), 1);
      const error = turn(1).locator('[data-role=error]');
      expect(await error.getAttribute('data-code')).toBe('context_overflow');
      expect(await error.locator('.error-copy').textContent()).toBe(DASHBOARD_COPY[AskErrorCode.ContextOverflow]);
      await error.getByText('What happened').click();
      await expect(error.locator('details dl').textContent()).resolves.toMatch(/model=local window=1024 question=\d+/);
    });

    it('refuses a question over the 4,000-token limit with the invalid-request copy (400, before queueing)', async () => {
      await openProject(projectId, projectKey);
      await askOnPage('向量索引如何工作？'.repeat(880), 1);
      const error = turn(1).locator('[data-role=error]');
      expect(await error.getAttribute('data-code')).toBe('invalid_request');
      expect(await error.locator('.error-copy').textContent()).toBe(DASHBOARD_COPY[AskErrorCode.InvalidRequest]);
    });
  });

  describe('a dropped events connection', () => {
    it('resumes with Last-Event-ID and ends with exactly the stored answer', async () => {
      await openProject(projectId, projectKey);
      const before = proxy.eventsRequests.length;
      const cut = proxy.cutNextEventsStream(3);
      const { accepted } = await askOnPage('What is the difference between IVFFlat and HNSW indexes?', 1);
      await cut;
      const requests = proxy.eventsRequests.slice(before);
      expect(requests.length).toBeGreaterThanOrEqual(2);
      expect(requests[0].lastEventId).toBeUndefined();
      expect(requests[1].lastEventId).toMatch(/^\d+-\d+$/);
      expect(requests.every((r) => r.url === accepted.eventsUrl)).toBe(true);
      const deltas = (await eventsOf(accepted, projectKey)).filter((e) => e.type === 'delta');
      expect(deltas.length).toBeGreaterThan(3);
      expect(await turn(1).getAttribute('data-status')).toBe('done');
      expect(await answerText(1)).toBe(await storedAnswer(accepted.askId));
    });
  });

  // Last, after every test above drove the page: the gateway's CSP blocked nothing the dashboard did.
  it("is served under the gateway's security headers, and its Content-Security-Policy blocked nothing", () => {
    const headers = pageResponse?.headers() ?? {};
    expect([
      headers['content-security-policy']?.split(';')[0],
      headers['x-frame-options'],
      headers['x-content-type-options'],
    ]).toEqual(["default-src 'self'", 'DENY', 'nosniff']);
    expect(cspViolations).toEqual([]);
  });

  it('never asked for the admin-only project list with a project key', () => {
    expect(requests.filter((r) => r === 'GET /api/v1/projects')).toEqual([]);
  });
});
