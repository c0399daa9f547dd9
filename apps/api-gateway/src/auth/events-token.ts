import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { type AppConfig, ConfigError } from '@ask/config';

/** HKDF info label of the derived events secret; a new label would invalidate every issued token. */
const DERIVATION_INFO = 'ask-service events capability token v1';

/**
 * The HMAC key of events capability tokens: ASK_EVENTS_SECRET, else 32 bytes derived with
 * HKDF-SHA256 from ASK_ENCRYPTION_KEY, else from ASK_ADMIN_KEY. Every gateway replica reads the same
 * environment, so a token issued by one replica is accepted by all of them (a random per-process
 * secret would not be).
 * @throws ConfigError when none of the three is set (the gateway does not boot).
 */
export function eventsSecret(config: AppConfig): Buffer {
  if (config.ASK_EVENTS_SECRET) return Buffer.from(config.ASK_EVENTS_SECRET, 'utf8');
  const base = config.ASK_ENCRYPTION_KEY || config.ASK_ADMIN_KEY;
  if (!base) {
    throw new ConfigError(
      'invalid environment:\n  ASK_EVENTS_SECRET: not set, and neither ASK_ENCRYPTION_KEY nor ASK_ADMIN_KEY is set to derive it from. ' +
        'Set ASK_EVENTS_SECRET (at least 32 characters, the same on every gateway replica).',
    );
  }
  return Buffer.from(hkdfSync('sha256', base, 'ask-service', DERIVATION_INFO, 32));
}

/**
 * Signs and checks per-ask events capability tokens: `base64url(HMAC-SHA256(secret, askId))`, 43
 * characters. A token grants reading that one ask's events and nothing else; it needs no expiry of
 * its own because the ask's stream expires (ASK_EVENTS_TTL_S after its last event).
 */
export class EventsTokenSigner {
  constructor(private readonly secret: Buffer) {}

  /** The token of `askId`. */
  sign(askId: string): string {
    return createHmac('sha256', this.secret).update(askId, 'utf8').digest('base64url');
  }

  /** Whether `token` is the token of `askId` (constant-time compare of the MACs). */
  verify(askId: string, token: string): boolean {
    const given = Buffer.from(token, 'utf8');
    const expected = Buffer.from(this.sign(askId), 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
