import { startFakeUpstream } from './fake-upstream';

/**
 * CLI: `node tools/run-ts.js tools/fake-upstream/src/main.ts [--port N]` starts the fake upstream on
 * 127.0.0.1 (port 8787 by default; 0 picks a free one) and prints its URL. Ctrl-C stops it.
 */
async function main(): Promise<void> {
  const i = process.argv.indexOf('--port');
  const port = i >= 0 ? Number(process.argv[i + 1]) : 8787;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('usage: main.ts [--port N]\n');
    process.exit(2);
  }
  const fake = await startFakeUpstream({ port });
  process.stdout.write(`fake upstream listening on ${fake.url}\n`);
  const stop = () => {
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
