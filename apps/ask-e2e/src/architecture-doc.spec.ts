import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { JobName, QueueName } from '@ask/ask-contracts';

const ROOT = resolve(__dirname, '..', '..', '..');
const DOC = readFileSync(resolve(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');

/**
 * The rows of the first markdown table under `heading` whose header row starts with `header` (cells
 * trimmed; the header and the rule dropped).
 */
function tableAfter(heading: string, header: string): string[][] {
  const start = DOC.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/ARCHITECTURE.md has no "${heading}"`);
  const lines = DOC.slice(start).split('\n').slice(2);
  const first = lines.findIndex((l) => l.startsWith(header));
  if (first < 0) throw new Error(`no table "${header}" under "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows.slice(2);
}

/** `a`, `b` from a cell such as "`ingest`, `reembed`". */
const codeNames = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

/**
 * docs/ARCHITECTURE.md is the living map: its queue table names exactly the queues and job names of
 * the job contract (ask-contracts `QueueName`, `JobName`), and its library table names exactly the
 * libs under libs/ with the tag each project.json gives. A queue, job or lib added without its row
 * (or a row left after a removal) fails here.
 */
describe('docs/ARCHITECTURE.md matches the code', () => {
  it('names every queue and job of the contract, and no other', () => {
    const rows = tableAfter('## Queues and jobs', '| queue |');
    expect(rows.map((r) => codeNames(r[0])[0]).sort()).toEqual(Object.values(QueueName).sort());
    expect(rows.flatMap((r) => codeNames(r[1])).sort()).toEqual(Object.values(JobName).sort());
  });

  it('names every lib with its tag, and no other', () => {
    const rows = tableAfter('## Libraries and dependency rules', '| lib |');
    const documented = Object.fromEntries(rows.map((r) => [codeNames(r[0])[0], r[1]]));
    const actual = Object.fromEntries(
      readdirSync(resolve(ROOT, 'libs')).map((lib) => {
        const tags: string[] = JSON.parse(readFileSync(resolve(ROOT, 'libs', lib, 'project.json'), 'utf8')).tags;
        const kind =
          tags.find((t) => t.startsWith('type:'))?.slice('type:'.length) ??
          tags.find((t) => t === 'scope:testing')?.slice('scope:'.length);
        return [lib, kind];
      }),
    );
    expect(documented).toEqual(actual);
  });
});
