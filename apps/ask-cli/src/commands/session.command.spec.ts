import { join } from 'node:path';
import type { BudgetEvent } from '@ask/ask-contracts';
import { toSettings } from './project.command';
import { formatBudget, formatSources, readQuestionFile, readQuestions } from './session.command';

const QUESTIONS = join(__dirname, '..', '..', 'questions');

describe('readQuestions', () => {
  it('reads the 18 questions of the PostgreSQL session, skipping comments and dropping the "? " marks', () => {
    const questions = readQuestions(join(QUESTIONS, 'postgresql-session.txt'));
    expect(questions).toHaveLength(18);
    expect(questions[0]).toBe('How do I create an index on a table, and which index types does PostgreSQL support?');
    expect(questions[6]).toBe('How do I repot an orchid without damaging its roots?');
  });
});

describe('readQuestionFile', () => {
  it.each([
    ['postgresql-session.txt', 14, 4],
    ['fallback-session.txt', 15, 3],
  ])('%s holds %i covered and %i uncovered questions', (file, covered, uncovered) => {
    const questions = readQuestionFile(join(QUESTIONS, file));
    expect([questions.filter((q) => q.covered).length, questions.filter((q) => !q.covered).length]).toEqual([
      covered,
      uncovered,
    ]);
    expect(questions.every((q) => !q.question.startsWith('?'))).toBe(true);
  });
});

describe('formatBudget', () => {
  it('prints every figure of the budget event, used against the limit that also holds the system prompt', () => {
    const budget: BudgetEvent = {
      provider: 'local',
      model: 'local',
      window: 8192,
      maxTokens: 2048,
      reserve: 600,
      margin: 410,
      counter: 'exact',
      counterId: 'tiktoken:o200k_base',
      calibration: 1,
      available: 5134,
      used: 5182,
      turnsKept: 6,
      turnsDropped: 3,
      contextKept: 12,
      contextDropped: 0,
      keptTurnIds: [],
    };
    expect(formatBudget(budget)).toBe(
      'budget: local/local window=8192 max_tokens=2048 margin=410 (exact tiktoken:o200k_base) ' +
        'prompt used=5182 (system prompt included) of limit=5734 (= window − max_tokens − margin: ' +
        'reserve=600 for the system prompt + available=5134 for question, turns and context) ' +
        'turns kept=6 dropped=3 context kept=12 dropped=0',
    );
    const memory = {
      mode: 'per-turn' as const,
      verbatimPairs: 2,
      summarisedPairs: 5,
      compactedPairs: 4,
      droppedPairs: 0,
      verbatim: [[10, 11]] as Array<[number, number]>,
      summarised: [[5, 9]] as Array<[number, number]>,
      compacted: [[1, 4]] as Array<[number, number]>,
      dropped: [],
      sessionSummary: true,
      sessionSummaryTokens: 80,
      memoryTokens: 300,
    };
    expect(formatBudget({ ...budget, turnsKept: 2, turnsDropped: 0, memory })).toMatch(
      / turns kept=2 summarised=5 compacted=4 dropped=0 context kept=12 dropped=0$/,
    );
  });
});

describe('toSettings', () => {
  it('defaults a new project to the embedded local providers', () => {
    expect(toSettings({}, true)).toMatchObject({
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
  });

  it('removes the LLM provider with --no-llm and leaves unset settings alone on update', () => {
    const settings = toSettings({ llm: false, topK: '5' }, false);
    expect(settings.llmSettings).toBeNull();
    expect(settings.embeddingSettings).toBeUndefined();
    expect(settings.topK).toBe(5);
  });
});

describe('formatSources', () => {
  it('prints one line per page, at its best chunk, best first', () => {
    const chunk = (id: string, source: string, title: string) => ({ kind: 'knowledge', id, title, source });
    expect(
      formatSources([
        chunk('k4', 'kb-postgresql-15-docs/indexes-types', 'Index Types'),
        chunk('k1', 'kb-postgresql-15-docs/indexes-types', 'Index Types'),
        { kind: 'insight', id: 'i1', title: 'Index the join keys' },
        chunk('k8', 'kb-postgresql-15-docs/sql-createindex', 'CREATE INDEX'),
        chunk('k2', 'kb-postgresql-15-docs/indexes-types', 'Index Types'),
      ]),
    ).toBe(
      [
        'sources (3):',
        '  1. Index Types · kb-postgresql-15-docs/indexes-types',
        '  2. Index the join keys · insight',
        '  3. CREATE INDEX · kb-postgresql-15-docs/sql-createindex',
      ].join('\n'),
    );
  });

  it('says none for an answer that cites nothing', () => {
    expect(formatSources([])).toBe('sources: none');
  });
});
