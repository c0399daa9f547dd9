import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import { redactSecrets } from '@ask/ask-errors';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import pino, { type DestinationStream, type Logger as Pino } from 'pino';

/** The ids a log line carries when the code that logs runs for an ask, a session or a project. */
export interface LogIds {
  askId?: string;
  sessionId?: string;
  projectId?: string;
}

/** The app's `LOG_LEVEL` (Nest's level names), validated in libs/config. */
export type LogLevelSetting = 'error' | 'warn' | 'log' | 'debug' | 'verbose';

/** Nest level → pino level: Nest's `log` is pino's `info`, `verbose` is `trace`. */
export const PINO_LEVELS: Readonly<Record<LogLevelSetting, pino.Level>> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

const context = new AsyncLocalStorage<LogIds>();

/**
 * Runs `fn` with `ids` attached to every log line written inside it (and in everything it awaits),
 * merged over the ids already in force. Returns what `fn` returns.
 */
export function withLogIds<T>(ids: LogIds, fn: () => T): T {
  const merged = {
    ...context.getStore(),
    ...Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)),
  };
  return context.run(merged, fn);
}

/** Adds ids to the context in force (an ask id learnt halfway through a request). No-op outside one. */
export function addLogIds(ids: LogIds): void {
  const store = context.getStore();
  if (store) Object.assign(store, ids);
}

/** The ids in force, or an empty object. */
export function currentLogIds(): LogIds {
  return { ...context.getStore() };
}

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
  level: LogLevelSetting;
  /** The app's name, in every line as `app`. */
  app: string;
  /**
   * Where lines go; default `process.stdout` (synchronous for files, and for pipes on Linux, so no
   * line is lost at exit; and written through `process.stdout.write`, which the suites capture).
   */
  destination?: DestinationStream;
}

/**
 * The process's pino logger: one JSON object per line with `level`, `time`, `app`, `msg`, Nest's
 * `context`, and the ids of {@link withLogIds} in force. Every line passes, as written, through the
 * exact-value redaction of the trust-boundaries issue (`redactSecrets`: admin key, events secret,
 * encryption key, decrypted provider credentials, verified API keys become `***`); string arguments
 * are redacted before they are serialised too, so a secret with characters JSON escapes is caught.
 */
export function createJsonLogger(options: JsonLoggerOptions): Pino {
  return pino(
    {
      level: PINO_LEVELS[options.level],
      base: { app: options.app },
      messageKey: 'msg',
      mixin: () => ({ ...context.getStore() }),
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((a) => (typeof a === 'string' ? redactSecrets(a) : a)) as Parameters<typeof method>,
          );
        },
        streamWrite: (line) => redactSecrets(line),
      },
    },
    options.destination ?? process.stdout,
  );
}

/**
 * A Nest `LoggerService` (nestjs-pino's `Logger`) writing through {@link createJsonLogger}: pass it
 * as `logger` to `NestFactory.create` / `createApplicationContext`, and every `new Logger(context)`
 * in the code writes JSON lines, filtered at `LOG_LEVEL`.
 */
export function createNestJsonLogger(options: JsonLoggerOptions): LoggerService {
  const logger = createJsonLogger(options);
  return new NestPinoLogger(new PinoLogger({ pinoHttp: { logger } }), {});
}
