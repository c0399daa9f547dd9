import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { redactSecrets } from '@ask/ask-errors';

/**
 * Nest's console logger with the exact value of every secret the process holds (`redactSecrets`:
 * the admin key, the events secret, the encryption key, decrypted provider credentials, verified API
 * keys) replaced by `***` in every line and stack trace it prints. Every app installs it at boot, so
 * each `new Logger(…)` in the code writes through it.
 */
export class RedactingLogger extends ConsoleLogger {
  protected override formatMessage(
    logLevel: LogLevel,
    message: unknown,
    pidMessage: string,
    formattedLogLevel: string,
    contextMessage: string,
    timestampDiff: string,
  ): string {
    return redactSecrets(
      super.formatMessage(logLevel, message, pidMessage, formattedLogLevel, contextMessage, timestampDiff),
    );
  }

  protected override printStackTrace(stack: string): void {
    super.printStackTrace(typeof stack === 'string' ? redactSecrets(stack) : stack);
  }
}
