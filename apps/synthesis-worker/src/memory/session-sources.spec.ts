import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractiveSummary, splitSentences } from '@ask/context-budget';
import { TiktokenCounter } from '@ask/token-counting';
import { QUESTION_BONUS, sessionSources } from './summary.service';

const counter = new TiktokenCounter('o200k_base');
const count = (text: string) => counter.countText(text);

/** MT-Bench-101 IC 97 then IC 100 (fixtures/data/mt-bench-101, see its SOURCE.txt) as one 7-turn session. */
const pairs = readFileSync(join(__dirname, '../../../../fixtures/data/mt-bench-101/mtbench101.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { task: string; id: number; history: Array<{ user: string; bot: string }> })
  .filter((d) => d.task === 'IC' && (d.id === 97 || d.id === 100))
  .flatMap((d) => d.history.map((t) => ({ question: t.user, answer: t.bot })));

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
