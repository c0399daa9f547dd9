import { normalizeSourceId, refuseDuplicateIds, sourceIds } from './source-ids';
import { type Harness, localProject, startGateway } from '../security/gateway-harness';

describe(normalizeSourceId.name, () => {
  it('stores the NFC form: the NFD spelling of an id is the same id', () => {
    expect(normalizeSourceId('id', 'cafe\u0301')).toBe('caf\u00e9');
    expect(normalizeSourceId('id', 'caf\u00e9')).toBe('caf\u00e9');
    expect(normalizeSourceId('id', 'Ångström-ﬁ')).toBe('Ångström-ﬁ'.normalize('NFC'));
  });

  it.each([
    ['\u200B', '200B'],
    ['\u200C', '200C'],
    ['\u200D', '200D'],
    ['\u200E', '200E'],
    ['\u200F', '200F'],
    ['\u202A', '202A'],
    ['\u202E', '202E'],
    ['\u2060', '2060'],
    ['\u2066', '2066'],
    ['\u2069', '2069'],
    ['\uFEFF', 'FEFF'],
  ])('refuses an id holding %j (U+%s)', (char, point) => {
    expect(() => normalizeSourceId('insights[0].id', `a${char}b`)).toThrow(
      expect.objectContaining({
        status: 400,
        details: `insights[0].id: must not contain invisible or bidirectional control characters (U+${point})`,
      }),
    );
  });
});

describe(refuseDuplicateIds.name, () => {
  it('names the second occurrence and the first', () => {
    expect(() => refuseDuplicateIds('insights', 'id', ['a', 'b', 'c', 'b'])).toThrow(
      expect.objectContaining({ details: 'insights[3].id: duplicate of insights[1].id ("b")' }),
    );
    expect(() => refuseDuplicateIds('insights', 'id', ['a', 'b'])).not.toThrow();
  });

  it('compares after normalisation (sourceIds)', () => {
    expect(() => sourceIds('documents', 'uri', ['caf\u00e9', 'cafe\u0301'], (u) => u)).toThrow(
      expect.objectContaining({ details: 'documents[1].uri: duplicate of documents[0].uri ("caf\u00e9")' }),
    );
  });
});

/** The upload stored for an accepted request holds each source under its NFC id (real gateway and PostgreSQL). */
describe('source ids through the gateway', () => {
  let h: Harness;
  let project: { id: string; key: string };

  beforeAll(async () => {
    h = await startGateway();
    project = await localProject(h, 'source ids');
  }, 60_000);
  afterAll(() => h?.close());

  it('stores NFD ids of documents, insights and recommendations in NFC', async () => {
    const knowledge = await h.call('POST', `/api/v1/projects/${project.id}/knowledge`, {
      key: project.key,
      json: { documents: [{ uri: 'notes/cafe\u0301.md', text: 'Coffee.' }] },
    });
    const insights = await h.call('POST', `/api/v1/projects/${project.id}/insights`, {
      key: project.key,
      json: {
        insights: [{ id: 're\u0301sume\u0301', name: 'R', description: 'd' }],
        // An insight and a recommendation may share an id: each kind has its own table.
        recommendations: [{ id: 're\u0301sume\u0301', title: 'T', body: 'b' }],
      },
    });
    expect([knowledge.status, insights.status]).toEqual([202, 202]);
    const rows: Array<{ kind: string; uri: string; title: string }> = await h.db.dataSource.query(
      `SELECT d.kind, d.uri, d.title FROM ingestion_documents d JOIN ingestions i ON i.id = d.ingestion_id
        WHERE i.project_id = $1 ORDER BY d.kind, d.ordinal`,
      [project.id],
    );
    expect(rows).toEqual([
      { kind: 'document', uri: 'notes/caf\u00e9.md', title: 'notes/caf\u00e9.md' },
      { kind: 'insight', uri: 'r\u00e9sum\u00e9', title: 'R' },
      { kind: 'recommendation', uri: 'r\u00e9sum\u00e9', title: 'T' },
    ]);
  });
});
