/**
 * Test support: {@link countOutOfBand} runs count-texts.cli.ts in child Node processes (two at once, one
 * per core of the 2-core CI machine) and returns every reference tokenizer's count of every text.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'nx.json'))) {
    const parent = resolve(dir, '..');
    if (parent === dir) throw new Error('count-out-of-band: cannot find the repository root (nx.json)');
    dir = parent;
  }
  return dir;
}

function runChild(texts: readonly string[], names: readonly string[]): Promise<Record<string, number[]>> {
  const root = repoRoot();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [join(root, 'tools', 'run-ts.js'), join(root, 'libs', 'token-counting', 'src', 'testing', 'count-texts.cli.ts')],
      { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => errors.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`count-texts exited ${code}: ${Buffer.concat(errors).toString()}`));
      else resolvePromise(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    });
    child.stdin.end(JSON.stringify({ texts, names }));
  });
}

/**
 * Counts of each text (no framing) under each named reference tokenizer, `{ name: counts[] }`. The
 * names are split over two child processes, balanced by measured counting speed.
 * @throws Error when a child process fails.
 */
export async function countOutOfBand(
  texts: readonly string[],
  names: readonly string[],
): Promise<Record<string, number[]>> {
  // Slow tokenizers first, dealt alternately so each process gets a similar share.
  const order = [
    'mistral-spm',
    'gemini',
    'gemma3',
    'o200k',
    'deepseek_v3',
    'claude',
    'mistral-tekken',
    'qwen3',
    'cl100k',
    'llama3',
    'gptoss',
  ];
  const sorted = [...names].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const groups: string[][] = [[], []];
  sorted.forEach((name, i) => groups[i % 2 === 0 ? 0 : 1].push(name));
  const results = await Promise.all(groups.filter((g) => g.length).map((g) => runChild(texts, g)));
  return Object.assign({}, ...results);
}
