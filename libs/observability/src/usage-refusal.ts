import type { Logger } from '@nestjs/common';
import { InconsistentUsageError } from '@ask/usage-accounting';
import { usageInconsistentTotal } from './metrics';

/**
 * The usage columns of a ledger row whose provider usage object was refused (a
 * negative or inconsistent bucket is an error logged with the raw object, never clamped): counts it
 * on `ask_usage_inconsistent_total` by provider, logs `<provider> <what> refused: <reason>; raw
 * usage <raw JSON>` at error level, and gives `{ usage: null, usageError: <message> }`.
 * @throws `err` itself when it is not an `InconsistentUsageError` (a bug, not a provider's figure).
 */
export function refuseUsage(
  err: unknown,
  provider: string,
  logger: Pick<Logger, 'error'>,
  what = 'usage',
): { usage: null; usageError: string } {
  if (!(err instanceof InconsistentUsageError)) throw err;
  usageInconsistentTotal.inc({ gen_ai_provider_name: provider });
  logger.error(`${provider} ${what} refused: ${err.reason}; raw usage ${JSON.stringify(err.raw)}`);
  return { usage: null, usageError: err.message };
}
