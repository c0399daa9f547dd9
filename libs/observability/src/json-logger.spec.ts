import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import path from 'node:path';
import { registerSecrets } from '@ask/ask-errors';
import { addLogIds, createJsonLogger, type LogLevelSetting, withLogIds } from './json-logger';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..', '..');

/** Runs the probe (a Nest app context with the apps' JSON logger) at `level`; its stdout lines, parsed. */
async function probe(level: LogLevelSetting, secret: string): Promise<Array<Record<string, unknown>>> {
  const { stdout } = await run(
    process.execPath,
    ['tools/run-ts.js', 'libs/observability/src/testing/log-level-probe.ts'],
    {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: level, PROBE_SECRET: secret },
    },
  );
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

const probeLines = (lines: Array<Record<string, unknown>>) =>
  lines.filter((l) => l['context'] === 'Probe').map((l) => [l['level'], l['msg']]);

describe('JSON logs at LOG_LEVEL (a Nest app context through nestjs-pino)', () => {
  jest.setTimeout(60_000);
  const secret = 'sk-live-PROBE-secret-0123456789abcdef';

  it('drops the debug line at `log`', async () => {
    const lines = await probe('log', secret);
    expect(probeLines(lines)).toEqual([
      ['info', 'log line with the key ***'],
      ['warn', 'warn line'],
      ['error', 'error line'],
    ]);
  });

  it('writes the debug line at `debug`, with the ask, session and project ids, and the secret redacted', async () => {
    const lines = await probe('debug', secret);
    expect(probeLines(lines)).toEqual([
      ['debug', 'debug line'],
      ['info', 'log line with the key ***'],
      ['warn', 'warn line'],
      ['error', 'error line'],
    ]);
    const debug = lines.find((l) => l['msg'] === 'debug line')!;
    expect(debug).toMatchObject({
      app: 'probe',
      askId: '11111111-1111-4111-8111-111111111111',
      sessionId: '22222222-2222-4222-8222-222222222222',
      projectId: '33333333-3333-4333-8333-333333333333',
    });
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('writes verbose lines only at `verbose`', async () => {
    const lines = await probe('verbose', secret);
    expect(probeLines(lines).map(([level]) => level)).toEqual(['trace', 'debug', 'info', 'warn', 'error']);
  });
});

describe(createJsonLogger.name, () => {
  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).trim().split('\n')) lines.push(JSON.parse(line));
        done();
      },
    });
    return { lines, destination };
  };

  it('redacts a registered secret in objects as well as messages', () => {
    const secret = 'AKIA-probe-"quoted"-secret-value';
    registerSecrets([secret]);
    const { lines, destination } = capture();
    const logger = createJsonLogger({ app: 't', level: 'log', destination });
    logger.info({ detail: `key=${secret}` }, `message ${secret}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'message ***', app: 't' });
    expect(JSON.stringify(lines[0])).not.toContain('probe-');
  });

  it('adds the ids of the context in force, and ids learnt later in it', async () => {
    const { lines, destination } = capture();
    const logger = createJsonLogger({ app: 't', level: 'log', destination });
    await withLogIds({ projectId: 'p1' }, async () => {
      logger.info('before');
      addLogIds({ askId: 'a1' });
      await Promise.resolve();
      logger.info('after');
    });
    logger.info('outside');
    expect(lines.map((l) => [l['msg'], l['projectId'], l['askId']])).toEqual([
      ['before', 'p1', undefined],
      ['after', 'p1', 'a1'],
      ['outside', undefined, undefined],
    ]);
  });
});
