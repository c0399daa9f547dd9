import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocumentLoadError } from './load-documents';
import { loadInsightsFile, parseInsights } from './insights-file';

describe('insights-file', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ask-insights-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  describe(loadInsightsFile.name, () => {
    it('reads insights and recommendations', async () => {
      const path = join(dir, 'ok.json');
      await writeFile(
        path,
        JSON.stringify({
          insights: [{ id: 1, name: 'N', description: 'D' }],
          recommendations: [{ id: 'r', title: 'T', body: 'B' }],
        }),
      );
      expect(await loadInsightsFile(path)).toEqual({
        insights: [{ id: '1', name: 'N', description: 'D' }],
        recommendations: [{ id: 'r', title: 'T', body: 'B' }],
      });
    });

    it('throws unreadable for a missing file and invalid_jsonl for bad JSON', async () => {
      await expect(loadInsightsFile(join(dir, 'missing.json'))).rejects.toMatchObject({ code: 'unreadable' });
      const path = join(dir, 'bad.json');
      await writeFile(path, '{');
      await expect(loadInsightsFile(path)).rejects.toMatchObject({ code: 'invalid_jsonl' });
    });
  });

  describe(parseInsights.name, () => {
    it('defaults a missing list to empty', () => {
      expect(parseInsights({ insights: [] })).toEqual({ insights: [], recommendations: [] });
    });

    it('names the bad field', () => {
      expect(() => parseInsights({ insights: [{ id: 'a', description: 'd' }] })).toThrow(DocumentLoadError);
      expect(() => parseInsights({ insights: [{ id: 'a', description: 'd' }] })).toThrow(/insights\.0\.name/);
    });

    it('rejects duplicate ids within a list', () => {
      expect(() =>
        parseInsights({
          recommendations: [
            { id: 'x', title: 't', body: 'b' },
            { id: 'x', title: 't', body: 'b' },
          ],
        }),
      ).toThrow('recommendations: duplicate id "x"');
    });
  });
});
