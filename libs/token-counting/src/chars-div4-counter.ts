import { APPROX_PER_MESSAGE_TOKENS, APPROX_PER_REQUEST_TOKENS } from './script-aware-counter';
import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

/**
 * `approx:chars4`: the seed's rune-count approximation, ⌈code points ÷ 4⌉ tokens. Kept only so the bench
 * and tests can show what it gets wrong (CJK, Thai, Hindi, emoji run several times over it); never
 * chosen by {@link selectTokenCounter}.
 */
export class CharsDiv4Counter implements TokenCounter {
  readonly id = 'approx:chars4';
  readonly exact = false;
  readonly perMessageTokens = APPROX_PER_MESSAGE_TOKENS;
  readonly perRequestTokens = APPROX_PER_REQUEST_TOKENS;

  /** ⌈code points ÷ 4⌉ (a surrogate pair is one code point, as Go's rune count). */
  countText(text: string): number {
    let codePoints = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0xdc00 || c > 0xdfff) codePoints++;
    }
    return Math.ceil(codePoints / 4);
  }

  /** Σ (countText + 8) + 8, the same framing as the script-aware estimate. */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }
}
