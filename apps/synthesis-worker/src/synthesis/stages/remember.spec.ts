import { summaryJobOf } from './remember';

const data = { projectId: 'p', sessionId: 's', askId: 'a' };

describe(summaryJobOf.name, () => {
  it.each([
    ['the pair the planner named', 'm2'],
    ['null when it named none', null],
  ])('carries as evictedUpTo %s', (_label, evictedUpTo) => {
    expect(summaryJobOf(data, 'msg', { evictedUpTo })).toEqual({
      projectId: 'p',
      sessionId: 's',
      messageId: 'msg',
      askId: 'a',
      evictedUpTo,
    });
  });
});
