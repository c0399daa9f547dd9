import { TiktokenCounter } from '@ask/token-counting';
import { cutToTokens, extractiveSummary, sentenceScore, splitSentences } from './extractive-summary';

const counter = new TiktokenCounter('o200k_base');
const count = (text: string) => counter.countText(text);

describe(splitSentences.name, () => {
  it('splits at sentence ends and line breaks', () => {
    expect(splitSentences('One. Two!  Three?\nFour 。五')).toEqual(['One.', 'Two!', 'Three?', 'Four 。五']);
  });
});

describe(sentenceScore.name, () => {
  it('ranks a sentence with a name and a number above small talk', () => {
    expect(sentenceScore('My manager Ingrid Halvorsen approved 12 replicas in Frankfurt.')).toBeGreaterThan(
      sentenceScore('That sounds good to me, thanks a lot.'),
    );
  });
});

describe(extractiveSummary.name, () => {
  const question =
    'Hello there. For the record, our deployment codename is Nightjar-417 and the budget is 83,000 euros. What region should we pick?';
  const answer =
    'Thanks for the details. It depends on many things. I would pick Frankfurt because most of your users are in Germany. ' +
    'You should also enable two replicas. Let me know if you need anything else.';

  it('keeps names, numbers and the open question within the budget, in their original order', () => {
    const summary = extractiveSummary(
      [
        { label: 'Q', text: question },
        { label: 'A', text: answer },
      ],
      60,
      count,
    );
    expect(summary).toBe(
      'Q: For the record, our deployment codename is Nightjar-417 and the budget is 83,000 euros. What region should we pick? ' +
        'A: I would pick Frankfurt because most of your users are in Germany. You should also enable two replicas.',
    );
    expect(count(summary)).toBeLessThanOrEqual(60);
  });

  it('is deterministic and never exceeds the budget', () => {
    for (const budget of [8, 20, 33, 47]) {
      const a = extractiveSummary(
        [
          { label: 'Q', text: question },
          { label: 'A', text: answer },
        ],
        budget,
        count,
      );
      expect(
        extractiveSummary(
          [
            { label: 'Q', text: question },
            { label: 'A', text: answer },
          ],
          budget,
          count,
        ),
      ).toBe(a);
      expect(count(a)).toBeLessThanOrEqual(budget);
      expect(a.length).toBeGreaterThan(0);
    }
  });

  it('cuts the best sentence at a word boundary when no sentence fits whole', () => {
    const long = 'For the record, our deployment codename is Nightjar-417 and the budget is 83,000 euros.';
    const cut = extractiveSummary([{ label: 'Q', text: long }], 10, count);
    expect(cut).toBe('Q: For the record, our deployment codename');
    expect(count(cut)).toBeLessThanOrEqual(10);
  });

  it('returns an empty text for empty sources', () => {
    expect(extractiveSummary([{ label: 'Q', text: '  ' }], 50, count)).toBe('');
  });
});

describe(cutToTokens.name, () => {
  const thai = 'ปฏิญญาสากลว่าด้วยสิทธิมนุษยชนได้รับการรับรองโดยสมัชชาใหญ่แห่งสหประชาชาติเมื่อวันที่สิบธันวาคม';

  it('keeps a text that fits, and cuts one that does not to the longest head that fits, at a space when that keeps most of it', () => {
    expect(cutToTokens('  short text ', 10, count)).toBe('short text');
    const long = 'The planner keeps the newest pairs that fit and drops the oldest ones first. '.repeat(5);
    const cut = cutToTokens(long, 20, count);
    expect(count(cut)).toBeLessThanOrEqual(20);
    expect(long.startsWith(cut)).toBe(true);
    expect(count(`${cut} planner`)).toBeGreaterThan(20 - 3);
    expect(cut.endsWith(' ')).toBe(false);
  });

  it('cuts a text without spaces (Thai) by characters', () => {
    const cut = cutToTokens(thai, 8, count);
    expect(cut.length).toBeGreaterThan(0);
    expect(count(cut)).toBeLessThanOrEqual(8);
    expect(thai.startsWith(cut)).toBe(true);
  });
});

describe('extractiveSummary of a text without spaces longer than the budget', () => {
  it('cuts its best sentence by characters instead of returning nothing', () => {
    const thai = 'ปฏิญญาสากลว่าด้วยสิทธิมนุษยชนได้รับการรับรองโดยสมัชชาใหญ่แห่งสหประชาชาติเมื่อวันที่สิบธันวาคม';
    const summary = extractiveSummary([{ label: 'Q', text: thai }], 12, count);
    expect(summary.startsWith('Q: ')).toBe(true);
    expect(summary.length).toBeGreaterThan(3);
    expect(count(summary)).toBeLessThanOrEqual(12);
  });
});
