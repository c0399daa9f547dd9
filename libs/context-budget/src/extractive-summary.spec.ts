import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TiktokenCounter } from '@ask/token-counting';
import {
  cutToTokens,
  extractiveSummary,
  isUserFact,
  sentenceScore,
  sentenceWords,
  splitClauses,
  splitSentences,
  userFacts,
  userUnits,
} from './extractive-summary';

const counter = new TiktokenCounter('o200k_base');
const count = (text: string) => counter.countText(text);
const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures', 'data');

describe(splitSentences.name, () => {
  it('splits at sentence ends and line breaks', () => {
    expect(splitSentences('One. Two!  Three?\nFour 。五')).toEqual(['One.', 'Two!', 'Three?', 'Four 。', '五']);
  });

  it('splits Chinese at 。！？ with no space after them (issue 32: a fact appended to a turn is its own sentence)', () => {
    expect(splitSentences('有哪些关于雪的古诗词？顺便说一下，我的经理是王建国。太好了！3.5 版本')).toEqual([
      '有哪些关于雪的古诗词？',
      '顺便说一下，我的经理是王建国。',
      '太好了！',
      '3.5 版本',
    ]);
  });

  it('splits at a half-width ? or ! followed by a CJK character (oasst1-zh #301, #665)', () => {
    expect(splitSentences('脑筋急转弯时间! 把大象放进冰箱里需要几个步骤?顺便说一下，我的经理是赵磊。')).toEqual([
      '脑筋急转弯时间!',
      '把大象放进冰箱里需要几个步骤?',
      '顺便说一下，我的经理是赵磊。',
    ]);
    expect(splitSentences('"视频"和"影片"是一样的东西吗?我们这项工作的预算是125,456元。')).toEqual([
      '"视频"和"影片"是一样的东西吗?',
      '我们这项工作的预算是125,456元。',
    ]);
    expect(splitSentences('Is v1.2?ok and 3.5 fine?')).toEqual(['Is v1.2?ok and 3.5 fine?']);
  });
});

describe(splitClauses.name, () => {
  it('splits after CJK commas, semicolons and colons, and after Latin ones followed by a space', () => {
    expect(splitClauses('很好，谢谢；结论：好')).toEqual(['很好，', '谢谢；', '结论：', '好']);
    expect(splitClauses('I see, my budget is 1,500; fine')).toEqual(['I see,', 'my budget is 1,500;', 'fine']);
  });
});

describe(userUnits.name, () => {
  it.each([
    [
      'a fact run into a long request after a comma (oasst1-zh #597 with a fact appended)',
      '请告诉我NLP的基本原理，我是一个人工智能小白，但我对你很有兴趣，所以我想学习顺便说一下，我的经理是张伟。',
      [
        '请告诉我NLP的基本原理，',
        '我是一个人工智能小白，',
        '但我对你很有兴趣，',
        '所以我想学习顺便说一下，',
        '我的经理是张伟。',
      ],
    ],
    [
      'a fact after a long clause with no mark before it (oasst1-zh #563)',
      '要做到详细的Tag，你要先打一个草稿，详细描述图像里每个对象需要哪些方面的描述，每个方面又需要哪些要素来描述（比如画面作为主体的少女需要用到很多Tag从不同方面来详细描述她的外貌、姿态、服饰等），然后再综合起来生成Prompt我们决定在杭州部署。',
      [
        '要做到详细的Tag，你要先打一个草稿，详细描述图像里每个对象需要哪些方面的描述，每个方面又需要哪些要素来描述（比如画面作为主体的少女需要用到很多Tag从不同方面来详细描述她的外貌、姿态、服饰等），',
        '然后再综合起来生成Prompt我们决定在杭州部署。',
      ],
    ],
    [
      'an English request with the fact in its middle',
      'Write me a long essay about the history of Rome and its emperors, by the way, my manager is Ingrid Halvorsen, and make it funny for a general audience of readers please.',
      [
        'Write me a long essay about the history of Rome and its emperors, by the way,',
        'my manager is Ingrid Halvorsen,',
        'and make it funny for a general audience of readers please.',
      ],
    ],
    ['a fact, whole', '顺便说一下，我的经理是王建国。', ['顺便说一下，我的经理是王建国。']],
    ['a request with no fact clause, whole', '你能帮我写一首诗吗，关于雪', ['你能帮我写一首诗吗，关于雪']],
  ])('%s', (_, sentence, units) => {
    expect(userUnits(sentence)).toEqual(units);
  });
});

describe(userFacts.name, () => {
  it("finds the user's facts wherever they sit in the turn", () => {
    expect(userFacts('我们决定在成都部署。有哪些关于雪的古诗词？')).toEqual(['我们决定在成都部署。']);
    expect(
      userFacts(
        'What is a monad? We decided to deploy in Frankfurt. Explain it with an example, my manager is Amara Okafor.',
      ),
    ).toEqual(['We decided to deploy in Frankfurt.', 'my manager is Amara Okafor.']);
  });
});

describe(sentenceWords.name, () => {
  it('cuts CJK runs into two-character words apart from the digits and Latin beside them', () => {
    expect(sentenceWords('我们的预算是41,300元。 OK')).toEqual(['我们', '的预', '算是', '41,300', '元', '。', 'OK']);
  });
});

describe(isUserFact.name, () => {
  it.each([
    ['By the way, my manager is Ingrid Halvorsen.', true],
    ['We decided to deploy in Frankfurt.', true],
    ['Please note the ticket number OPS-4400.', true],
    ['顺便说一下，我的经理是王建国。', true],
    ['请记下工单号OPS-4400。', true],
    ['我们这项工作的预算是41,300元。', true],
    ['Who is the tallest at the moment?', false],
    ['I want you to act as a travel guide.', false],
    ['Can you help me plan my trip?', false],
    ['walk me through making a simple substring-match CLI app.', false],
    ['你能帮我写一首诗吗', false],
    ['The ticket is closed.', false],
    [`I ${'really '.repeat(30)}like it.`, false],
  ])('%s → %s', (sentence, fact) => {
    expect(isUserFact(sentence)).toBe(fact);
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

/** Real dialogues (fixtures/data: MT-Bench-101 and oasst1-zh, see their SOURCE.txt). */
describe(`${extractiveSummary.name} keeps what the user said (issue 32 item 4)`, () => {
  const mtBench = readFileSync(join(FIXTURES, 'mt-bench-101', 'mtbench101.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { task: string; id: number; history: Array<{ user: string; bot: string }> });
  const dialogue = (task: string, id: number) =>
    (mtBench.find((d) => d.task === task && d.id === id) as (typeof mtBench)[number]).history;
  /** The session summary's sources of a dialogue, as SummaryService.compact builds them from pairs. */
  const sessionSources = (history: Array<{ user: string; bot: string }>) =>
    history.flatMap((t, i) => [
      { label: `Turn ${i + 1}`, text: t.user, user: true },
      { label: '', text: t.bot },
    ]);

  it.each([
    ['a row of figures', 'Turn 14: 1.0 1.000 3.4 .654 0.91 2.2'],
    ['a list line', '1. Intel Core i7 processor, 16GB of RAM and an NVIDIA GeForce RTX 4060.'],
    ['a code line', 'const budget = parseInt(process.argv[2], 10); // 1500'],
  ])("ranks the user's 'I prefer Windows and my budget is around $1,500.' above %s", (_label, other) => {
    const mine = sentenceScore('I prefer Windows and my budget is around $1,500.', true);
    expect(mine).toBeGreaterThan(sentenceScore(other, true));
    expect(mine).toBeGreaterThan(sentenceScore(other, false));
  });

  it("keeps the user's profession and budget of MT-Bench-101 IC 97 in a 60-token session summary (main kept neither)", () => {
    const summary = extractiveSummary(sessionSources(dialogue('IC', 97)), 60, count);
    expect(summary).toBe(
      "Turn 2: I'm a graphic designer and I often use software like Adobe Photoshop and Illustrator. " +
        'Are you looking for a Windows-based laptop or would you consider a MacBook? ' +
        'Turn 3: I prefer Windows and my budget is around $1,500.',
    );
  });

  it('keeps the user statement of oasst1-zh #151 first, over the answer’s figures', () => {
    const zh = JSON.parse(readFileSync(join(FIXTURES, 'oasst1-zh', 'oaast_sft_zh.json'), 'utf8')) as Array<{
      instruction: string;
      output: string;
    }>;
    const summary = extractiveSummary(
      [
        { label: 'Q', text: zh[151].instruction, bonus: 3, user: true },
        { label: 'A', text: zh[151].output },
      ],
      60,
      count,
    );
    expect(summary.startsWith('Q: 我是一个重度手游玩家，你觉得哪款更适合我？ A: ')).toBe(true);
    expect(count(summary)).toBeLessThanOrEqual(60);
  });
});
