import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractiveSummary, splitSentences } from '@ask/context-budget';
import { approximateCounter, TiktokenCounter } from '@ask/token-counting';
import {
  MIN_SUMMARY_TOKENS,
  pairSummaryBudget,
  QUESTION_BONUS,
  SUMMARY_SHARE_OF_PAIR,
  sessionSources,
} from './summary.service';

const counter = new TiktokenCounter('o200k_base');
const count = (text: string) => counter.countText(text);

/** MT-Bench-101 IC 97 then IC 100 (fixtures/data/mt-bench-101, see its SOURCE.txt) as one 7-turn session. */
const pairs = readFileSync(join(__dirname, '../../../../fixtures/data/mt-bench-101/mtbench101.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { task: string; id: number; history: Array<{ user: string; bot: string }> })
  .filter((d) => d.task === 'IC' && (d.id === 97 || d.id === 100))
  .flatMap((d) => d.history.map((t) => ({ question: t.user, answer: t.bot })));

/** The first `n` turns of whole MT-Bench-101 dialogues of the fixture, in file order. */
function mtBenchTurns(n: number) {
  return readFileSync(join(__dirname, '../../../../fixtures/data/mt-bench-101/mtbench101.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .flatMap((line) => (JSON.parse(line) as { history: Array<{ user: string; bot: string }> }).history)
    .filter((t) => t.user.trim() && t.bot.trim())
    .slice(0, n)
    .map((t) => ({ question: t.user, answer: t.bot }));
}

/** The first `n` turns of the oasst1-zh fixture's threads (the longest record of each tree, history then instruction), in file order. */
function oasstZhTurns(n: number) {
  const rows = JSON.parse(
    readFileSync(join(__dirname, '../../../../fixtures/data/oasst1-zh/oaast_sft_zh.json'), 'utf8'),
  ) as Array<{ instruction: string; input: string; output: string; history: Array<[string, string]> }>;
  const longest = new Map<string, (typeof rows)[number]>();
  for (const r of rows) {
    const root = r.history[0]?.[0] ?? r.instruction;
    const known = longest.get(root);
    if (!known || known.history.length < r.history.length) longest.set(root, r);
  }
  return [...longest.values()]
    .flatMap((r) => [
      ...r.history.map(([question, answer]) => ({ question, answer })),
      { question: r.input ? `${r.instruction}\n${r.input}` : r.instruction, answer: r.output },
    ])
    .filter((t) => t.question.trim() && t.answer.trim())
    .slice(0, n);
}

describe(sessionSources.name, () => {
  it('carries forward every statement of the user that the per-turn summaries it replaces held (issue 32 item 4)', () => {
    expect(pairs).toHaveLength(7);
    // Each pair's summary as SummaryService writes it (40 tokens), then the session summary from them (160).
    const summaries = pairs.map((p) =>
      extractiveSummary(
        [
          { label: 'Q', text: p.question, bonus: QUESTION_BONUS, user: true },
          { label: 'A', text: p.answer },
        ],
        40,
        count,
      ),
    );
    const session = extractiveSummary(
      pairs.flatMap((p, i) => sessionSources(p, i + 1, summaries[i])),
      160,
      count,
    );
    const held = summaries.flatMap((s) =>
      splitSentences(s.replace(/ A: .*$/, '').replace(/^Q: /, '')).filter((x) => /\b(I'm|I|my|My)\b/.test(x)),
    );
    expect(held).toEqual([
      "I'm a graphic designer and I often use software like Adobe Photoshop and Illustrator.",
      'I prefer Windows and my budget is around $1,500.',
      "I'm interested in a digital camera.",
      "My budget is around $500, and I'm mainly interested in taking portraits.",
    ]);
    expect(held.filter((fact) => !session.includes(fact))).toEqual([]);
    expect(count(session)).toBeLessThanOrEqual(160);
  });

  it.each([
    [
      'English: 60 MT-Bench-101 turns',
      mtBenchTurns(60),
      [
        'By the way, my manager is Ingrid Halvorsen.',
        'Our budget for this work is 41,300 euros.',
        'We decided to deploy in Frankfurt.',
        'Please note the ticket number OPS-4400.',
        'I chose teal as the colour of the charts.',
      ],
    ],
    [
      'Chinese: 60 oasst1-zh turns',
      oasstZhTurns(60),
      [
        '顺便说一下，我的经理是王建国。',
        '我们这项工作的预算是41,300元。',
        '我们决定在成都部署。',
        '请记下工单号OPS-4400。',
        '我选了青绿色作为图表的颜色。',
      ],
    ],
  ])(
    'a 576-token session summary of %s keeps the five facts planted in turns 1–5 that their per-turn summaries held (issue 32 items 3–4)',
    (_, turns, facts) => {
      expect(turns).toHaveLength(60);
      const session = turns.map((t, i) => ({
        question:
          i < facts.length ? `${t.question}${/[\u4e00-\u9fff]/u.test(facts[i]) ? '' : ' '}${facts[i]}` : t.question,
        answer: t.answer,
      }));
      // Each pair's summary as SummaryService writes it: at most 96 tokens and 70% of the pair, floor 32.
      const summaries = session.map((p) =>
        extractiveSummary(
          [
            { label: 'Q', text: p.question, bonus: QUESTION_BONUS, user: true },
            { label: 'A', text: p.answer },
          ],
          Math.min(
            96,
            Math.max(MIN_SUMMARY_TOKENS, Math.floor((count(p.question) + count(p.answer)) * SUMMARY_SHARE_OF_PAIR)),
          ),
          count,
        ),
      );
      expect(facts.filter((f, i) => !summaries[i].includes(f))).toEqual([]);
      // The session summary of a compaction that evicted all but the newest two pairs, rebuilt in full.
      const summary = extractiveSummary(
        session.slice(0, 58).flatMap((p, i) => sessionSources(p, i + 1, summaries[i])),
        576,
        count,
      );
      expect(facts.filter((f) => !summary.includes(f))).toEqual([]);
      expect(count(summary)).toBeLessThanOrEqual(576);
    },
  );

  it('splits an extractive `Q: … A: …` summary into the user part and the answer part', () => {
    expect(sessionSources({ question: 'q', answer: 'a' }, 3, 'Q: I live in Oslo. A: Noted.')).toEqual([
      { label: 'Turn 3', text: 'I live in Oslo.', bonus: 1, user: true },
      { label: '', text: 'Noted.', bonus: 1 },
    ]);
    expect(sessionSources({ question: 'I live in Oslo.', answer: 'Noted.' }, 1)).toEqual([
      { label: 'Turn 1', text: 'I live in Oslo.', user: true },
      { label: '', text: 'Noted.' },
    ]);
  });
});

/**
 * The oasst1-zh turns whose planted fact the bench lost at 1834dd6 (fixtures/oasst1-zh-fact-turns.json,
 * see fixtures/SOURCE.txt), each with its session's fact appended as the bench planted it then.
 */
const factTurns = (
  JSON.parse(readFileSync(join(__dirname, 'fixtures', 'oasst1-zh-fact-turns.json'), 'utf8')) as Array<{
    record: number;
    question: string;
    answer: string;
  }>
).map((t, i) => {
  const fact = [
    '顺便说一下，我的经理是张伟。',
    '顺便说一下，我的经理是赵磊。',
    '我们这项工作的预算是125,456元。',
    '我们这项工作的预算是146,495元。',
    '我们决定在杭州部署。',
  ][i];
  return { record: t.record, fact, question: `${t.question}${fact}`, answer: t.answer };
});

describe(pairSummaryBudget.name, () => {
  it('is 70% of the pair, floor 32, at most the setting, when the question holds no fact', () => {
    expect(pairSummaryBudget(200, 'What is a monad?', 96, count)).toBe(96);
    expect(pairSummaryBudget(100, 'What is a monad?', 96, count)).toBe(70);
    expect(pairSummaryBudget(20, 'What is a monad?', 96, count)).toBe(MIN_SUMMARY_TOKENS);
  });

  it("holds the question's facts when they need more than that, within the setting", () => {
    const estimate = approximateCounter();
    const countEstimate = (t: string) => estimate.countText(t);
    const [short] = factTurns.filter((t) => t.record === 346);
    const pair = countEstimate(short.question) + countEstimate(short.answer);
    // The estimate over-counts Chinese (the uncalibrated prior): 70% of the pair is less than the fact.
    expect(Math.floor(pair * SUMMARY_SHARE_OF_PAIR)).toBeLessThan(countEstimate(`Q: ${short.question}`) + 1);
    expect(pairSummaryBudget(pair, short.question, 96, countEstimate)).toBe(
      countEstimate('Q:') + 1 + countEstimate(short.question) + 1,
    );
    expect(pairSummaryBudget(pair, short.question, 40, countEstimate)).toBe(40);
  });
});

describe('the facts the Chinese sessions 8–15 lost (issue 32 follow-up)', () => {
  const estimate = approximateCounter();
  const countEstimate = (t: string) => estimate.countText(t);
  const pairSummary = (p: { question: string; answer: string }, countText: (t: string) => number) =>
    extractiveSummary(
      [
        { label: 'Q', text: p.question, bonus: QUESTION_BONUS, user: true },
        { label: 'A', text: p.answer },
      ],
      pairSummaryBudget(countText(p.question) + countText(p.answer), p.question, 96, countText),
      countText,
    );

  it.each([
    ['o200k_base', count],
    ['the uncalibrated estimate', countEstimate],
  ])("each pair's summary keeps its fact, counted with %s", (_, countText) => {
    expect(factTurns.filter((t) => !pairSummary(t, countText).includes(t.fact)).map((t) => t.record)).toEqual([]);
  });

  it('the session summary keeps every fact, even when a pair summary had lost it', () => {
    // The summaries main wrote for these pairs: the answer only (the question did not fit its 70%).
    const lost = factTurns.map((t) => `A: ${splitSentences(t.answer)[0]}`);
    const summary = extractiveSummary(
      factTurns.flatMap((p, i) => sessionSources(p, i + 1, lost[i])),
      200,
      count,
    );
    expect(factTurns.filter((t) => !summary.includes(t.fact)).map((t) => t.record)).toEqual([]);
    expect(count(summary)).toBeLessThanOrEqual(200);
  });

  it("adds to a pair summary's sources the question's facts it does not hold", () => {
    const [turn] = factTurns;
    expect(sessionSources(turn, 2, 'A: NLP 的基本原理可以概括为以下几点:')).toEqual([
      {
        label: 'Turn 2',
        text: '我是一个人工智能小白，但我对你很有兴趣，所以我想学习顺便说一下，我的经理是张伟。',
        bonus: 1,
        user: true,
      },
      { label: '', text: 'NLP 的基本原理可以概括为以下几点:', bonus: 1 },
    ]);
  });
});
