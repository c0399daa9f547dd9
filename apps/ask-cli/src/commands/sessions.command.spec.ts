import { formatSessions } from './sessions.command';
import { count } from './plural';

describe(formatSessions.name, () => {
  it('prints one aligned row per session, newest first, with the turn count in the right number', () => {
    expect(
      formatSessions([
        {
          id: '6f0c1d2e-0000-4000-8000-000000000002',
          title: 'Which distance functions can that index use?',
          createdAt: '2026-12-02T05:01:00.000Z',
          updatedAt: '2026-12-02T05:09:41.123Z',
          messageCount: 1,
        },
        {
          id: '6f0c1d2e-0000-4000-8000-000000000001',
          title: 'How do I create an HNSW index with pgvector?',
          createdAt: '2026-12-01T10:00:00.000Z',
          updatedAt: '2026-12-01T10:30:00.000Z',
          messageCount: 18,
        },
      ]),
    ).toBe(
      '6f0c1d2e-0000-4000-8000-000000000002  1 turn    2026-12-02 05:09  Which distance functions can that index use?\n' +
        '6f0c1d2e-0000-4000-8000-000000000001  18 turns  2026-12-01 10:30  How do I create an HNSW index with pgvector?\n' +
        '2 sessions\n',
    );
  });

  it('says so when the project has none', () => {
    expect(formatSessions([])).toBe('no sessions\n');
  });
});

describe(count.name, () => {
  it.each([
    [0, 'documents'],
    [1, 'document'],
    [2, 'documents'],
  ])('%i takes "%s"', (n, word) => {
    expect(count(n, 'document')).toBe(`${n} ${word}`);
  });
});
