import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { AskClient, type AskOutcome } from '@ask/ask-client';
import { type BudgetEvent, citedSources, type DoneEvent, promptInputLimit } from '@ask/ask-contracts';
import { count } from './plural';

/** One question of a session file; `covered` is false for a line marked `? ` (not covered by the corpus). */
export interface SessionQuestion {
  question: string;
  covered: boolean;
}

/**
 * The questions of a session file, in order: one per line; blank lines and `#` comments skipped; a
 * line starting with `? ` is a question the corpus does not cover (the mark is not part of it).
 */
export function readQuestionFile(path: string): SessionQuestion[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) =>
      line.startsWith('? ') ? { question: line.slice(2).trim(), covered: false } : { question: line, covered: true },
    );
}

/** The questions of a session file ({@link readQuestionFile}) without their marks. */
export function readQuestions(path: string): string[] {
  return readQuestionFile(path).map((q) => q.question);
}

/**
 * One line describing a turn's budget (all figures tokens). The prompt's two sides are named so they
 * compare like with like: `prompt used` (what is sent: system prompt, kept turns, kept context and the
 * question, with framing) against the prompt's input limit `window − max_tokens − margin`, which is
 * the system-prompt `reserve` plus the event's `available` (what the question, turns and context may
 * use). `available` alone excludes the reserve, so `used` may exceed it without any overflow.
 */
export function formatBudget(b: BudgetEvent): string {
  const limit = promptInputLimit(b);
  return (
    `budget: ${b.provider}/${b.model} window=${b.window} max_tokens=${b.maxTokens} margin=${b.margin} ` +
    `(${b.counter} ${b.counterId}${b.calibration > 1 ? ` ×${b.calibration}` : ''}) ` +
    `prompt used=${b.used} (system prompt included) of limit=${limit} (= window − max_tokens − margin: ` +
    `reserve=${b.reserve} for the system prompt + available=${b.available} for question, turns and context) ` +
    `turns kept=${b.turnsKept}${memoryPart(b)} dropped=${b.turnsDropped} ` +
    `context kept=${b.contextKept} dropped=${b.contextDropped}`
  );
}

/**
 * The turns conversation memory carried in other form than verbatim: ` summarised=S` (pairs sent as
 * their per-turn summary) and ` compacted=C` (pairs the session summary stood for), each only when
 * non-zero; '' for a stream without memory (memory `off`, or written before memory existed), whose
 * `turnsKept` + `turnsDropped` are every earlier turn.
 */
function memoryPart(b: BudgetEvent): string {
  const m = b.memory;
  if (!m) return '';
  return (
    (m.summarisedPairs > 0 ? ` summarised=${m.summarisedPairs}` : '') +
    (m.compactedPairs > 0 ? ` compacted=${m.compactedPairs}` : '')
  );
}

/**
 * A turn's sources as the answer cites them, one line per page (`citedSources`: a page named by several
 * chunks once, at its best chunk), best first: `title · uri` for a knowledge page, `title · kind` for an
 * insight or recommendation; `sources: none` when the answer cites nothing (an abstention).
 */
export function formatSources(sources: DoneEvent['sources']): string {
  const pages = citedSources(sources);
  if (!pages.length) return 'sources: none';
  return [`sources (${pages.length}):`, ...pages.map((s, i) => `  ${i + 1}. ${s.title} · ${s.source ?? s.kind}`)].join(
    '\n',
  );
}

/**
 * Asks every question in order in ONE session over HTTP + SSE, printing each answer as it streams,
 * each turn's budget and its sources, one per page. Returns the outcomes.
 */
export async function runSession(
  client: AskClient,
  projectId: string,
  questions: string[],
  out: (text: string) => void = (t) => process.stdout.write(t),
): Promise<AskOutcome[]> {
  const outcomes: AskOutcome[] = [];
  let sessionId: string | undefined;
  for (const [i, question] of questions.entries()) {
    out(`\n━━ Turn ${i + 1}/${questions.length}: ${question}\n`);
    const outcome = await client.askAndWait(projectId, question, {
      sessionId,
      onEvent: (event) => {
        if (event.type === 'budget') out(`${formatBudget(event.data as BudgetEvent)}\n\n`);
        if (event.type === 'delta') out((event.data as { text: string }).text);
        if (event.type === 'reset') out('\n[answer restarted]\n');
      },
    });
    sessionId = outcome.sessionId;
    if (outcome.error)
      out(
        `\nerror ${outcome.error.status} ${outcome.error.code}: ${outcome.error.error}${outcome.error.details ? ` (${outcome.error.details})` : ''}\n`,
      );
    else
      out(
        `\n(done: prompt_tokens=${outcome.done?.usage.promptTokens ?? '?'} completion_tokens=${outcome.done?.usage.completionTokens ?? '?'})\n` +
          `${formatSources(outcome.done?.sources ?? [])}\n`,
      );
    outcomes.push(outcome);
  }
  return outcomes;
}

/** `ask session --project ID --questions FILE [--gateway URL] [--api-key KEY]` (defaults: $ASK_GATEWAY, $ASK_API_KEY). */
export function registerSessionCommand(program: Command): void {
  program
    .command('session')
    .description('ask every question of a file in one session over HTTP + SSE')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--questions <file>', 'one question per line')
    .addOption(new Option('--gateway <url>', 'gateway base URL').env('ASK_GATEWAY').default('http://127.0.0.1:3000'))
    .addOption(
      new Option('--api-key <key>', 'project API key (Authorization: Bearer); `ask key create` makes one').env(
        'ASK_API_KEY',
      ),
    )
    .action(async (flags: { project: string; questions: string; gateway: string; apiKey?: string }) => {
      const outcomes = await runSession(
        new AskClient(flags.gateway, flags.apiKey),
        flags.project,
        readQuestions(flags.questions),
      );
      const failed = outcomes.filter((o) => o.error).length;
      console.log(`\n━━ ${count(outcomes.length, 'turn')}, ${outcomes.length - failed} answered, ${failed} failed`);
      if (failed) process.exitCode = 1;
    });
}
