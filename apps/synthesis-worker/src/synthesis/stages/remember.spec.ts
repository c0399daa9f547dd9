import { summaryJobOf } from './remember';

const data = { projectId: 'p', sessionId: 's', askId: 'a' };
const memory = (dropped: string[], compacted: string[]) =>
  ({
    memory: {
      mode: 'compaction',
      verbatimTurnIds: [] as string[],
      summarisedTurnIds: [] as string[],
      compactedTurnIds: compacted,
      droppedTurnIds: dropped,
      sessionSummaryTokens: 0,
      memoryTokens: 0,
      tokens: 0,
    },
  }) as const;

describe(summaryJobOf.name, () => {
  it.each([
    ['the newest dropped pair when the plan dropped some', memory(['m1', 'm2'], ['m0']), 'm2'],
    ['the newest compacted pair when it dropped none', memory([], ['m0', 'm1']), 'm1'],
    ['null when it evicted none', memory([], []), null],
  ])('names as evictedUpTo %s', (_label, plan, evictedUpTo) => {
    expect(summaryJobOf(data, 'msg', plan)).toEqual({
      projectId: 'p',
      sessionId: 's',
      messageId: 'msg',
      askId: 'a',
      evictedUpTo,
    });
  });
});
