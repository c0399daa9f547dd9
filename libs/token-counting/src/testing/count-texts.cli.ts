/**
 * Test support: counts texts with reference tokenizers in a plain Node process (run through
 * tools/run-ts.js). Jest's module sandbox runs these tokenizers 5–10× slower than Node does, so the
 * accuracy spec counts its thousands of texts here. stdin: {"texts": string[], "names": string[]};
 * stdout: {"<name>": number[]} (tokens of each text, no framing).
 */
import { readFileSync } from 'node:fs';
import { referenceTokenizers } from './references';

const input = JSON.parse(readFileSync(0, 'utf8')) as { texts: string[]; names: string[] };
const out: Record<string, number[]> = {};
for (const ref of referenceTokenizers()) {
  if (!input.names.includes(ref.name)) continue;
  out[ref.name] = input.texts.map((t) => ref.counter.countText(t));
}
process.stdout.write(JSON.stringify(out));
