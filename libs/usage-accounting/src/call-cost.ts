import type { Prices } from '@ask/model-catalog';
import type { NormalizedUsage } from './normalize-usage';

/** Decimal places of a stored cost: USD to the pico-dollar (10⁻¹² USD), so sums of rows are exact. */
export const COST_SCALE = 12;

/** A price in USD per MTok as an integer count of micro-dollars per MTok. @throws RangeError past 6 decimals. */
function microPerMTok(price: number): bigint {
  const micro = Math.round(price * 1e6);
  if (!Number.isFinite(price) || price < 0 || Math.abs(micro - price * 1e6) > 1e-6)
    throw new RangeError(`price ${price} USD/MTok has more than 6 decimals or is negative`);
  return BigInt(micro);
}

/** A pico-dollar amount as a decimal USD string with {@link COST_SCALE} places, e.g. `0.000912000000`. */
export function formatPicoUsd(pico: bigint): string {
  const negative = pico < 0n;
  const digits = (negative ? -pico : pico).toString().padStart(COST_SCALE + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -COST_SCALE)}.${digits.slice(-COST_SCALE)}`;
}

/**
 * The cost of one call in USD, exact (integer arithmetic in pico-dollars), as a decimal string with
 * 12 places: uncached input (`input − cacheRead − cacheWrite`) at the input price, cache reads and
 * writes at theirs, output (reasoning included) at the output price; prices are USD per MTok.
 *
 * Anthropic turn 1 on Claude Sonnet 4 (input 3,012 of which 3,000 written, output 0):
 * 12 × 3 + 3,000 × 3.75 = 11,286 USD/MTok·tokens → `0.011286000000`.
 *
 * @throws RangeError for a price with more than 6 decimals (never rounded silently).
 */
export function callCostUsd(usage: NormalizedUsage, prices: Prices): string {
  const fresh = BigInt(usage.input - usage.cacheRead - usage.cacheWrite);
  const pico =
    fresh * microPerMTok(prices.input) +
    BigInt(usage.cacheRead) * microPerMTok(prices.cacheRead) +
    BigInt(usage.cacheWrite) * microPerMTok(prices.cacheWrite) +
    BigInt(usage.output) * microPerMTok(prices.output);
  return formatPicoUsd(pico);
}
