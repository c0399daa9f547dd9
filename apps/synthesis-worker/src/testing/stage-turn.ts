/**
 * A loaded turn for a spec of one synthesis stage: a project with `llm` (an API key stored when the
 * provider is not `local`), a session with `turns` earlier pairs, the ask opened and claimed in
 * Redis, then the load stage (`loadTurn`) on the harness's parts. Not a spec.
 */
import { randomUUID } from 'node:crypto';
import type { RetrievedItem } from '@ask/ask-contracts';
import type { ProjectsRepository } from '@ask/persistence';
import type { CallScope } from '../synthesis/call-ledger';
import { loadTurn } from '../synthesis/stages/load';
import type { SynthesisDeps, Turn } from '../synthesis/stages/turn';
import type { SynthesisHarness } from './synthesis-harness';

/** The one retrieved item of a stage spec's ask. */
export const STAGE_ITEMS: RetrievedItem[] = [
  { id: 'k1', kind: 'knowledge', title: 'HNSW', text: 'An HNSW index builds a multilayer graph.', score: 0.8 },
];

/** Options of {@link loadedTurn}. */
export interface LoadedTurnOptions {
  /** Earlier pairs in the session (question `Earlier question <i>?`, a fixed answer); default 0. */
  turns?: number;
  question?: string;
  items?: RetrievedItem[];
  /** Deps with the call ledger recording (`provider_calls` rows); default false. */
  ledger?: boolean;
}

/** A loaded turn, the deps it was loaded with and the call scope of its calls. */
export interface LoadedTurn {
  turn: Turn;
  deps: SynthesisDeps;
  call(purpose: CallScope['purpose']): CallScope;
}

/** @throws Error when the session already holds the ask's pair (never: the ask is new). */
export async function loadedTurn(
  harness: SynthesisHarness,
  llm: NonNullable<Parameters<ProjectsRepository['create']>[0]['llmSettings']>,
  { turns = 0, question = 'What does HNSW build?', items = STAGE_ITEMS, ledger = false }: LoadedTurnOptions = {},
): Promise<LoadedTurn> {
  const project = await harness.projects.create({ name: 'stage', llmSettings: llm });
  if (llm.provider !== 'local') await harness.projects.setCredentials(project.id, { apiKey: 'sk-stage-spec' });
  const sessionId = (await harness.sessions.create(project.id, 's')).id;
  for (let i = 0; i < turns; i += 1)
    await harness.sessions.appendMessage({
      projectId: project.id,
      sessionId,
      askId: randomUUID(),
      question: `Earlier question ${i}?`,
      answer: 'The planner keeps the newest pairs that fit.',
    });
  const askId = randomUUID();
  const acceptedAt = new Date().toISOString();
  await harness.events.open(askId, { projectId: project.id, sessionId, acceptedAt });
  const claim = await harness.events.claim(askId);
  if (!claim) throw new Error('loadedTurn: the ask could not be claimed');
  const deps = harness.deps({ ledger });
  const turn = await loadTurn(
    deps,
    { askId, projectId: project.id, sessionId, question, acceptedAt, items },
    { claim },
  );
  if (turn === 'answered') throw new Error('loadedTurn: already answered');
  return { turn, deps, call: (purpose) => ({ projectId: project.id, sessionId, askId, purpose }) };
}
