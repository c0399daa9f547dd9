import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

/**
 * A counter that counts each distinct text once: `countText` remembers its answers, so a request whose
 * question, system prompt or items are counted again (re-planning after a provider's overflow, storing
 * the question's count with the answer) reuses the first count instead of tokenising the text again.
 * Same id, exactness and framing as `counter`. Meant to live for one request (the memo keeps the texts
 * it was asked about, which the request holds anyway).
 */
export function countOnce(counter: TokenCounter): TokenCounter {
  const memo = new Map<string, number>();
  const once: TokenCounter = {
    id: counter.id,
    exact: counter.exact,
    perMessageTokens: counter.perMessageTokens,
    perRequestTokens: counter.perRequestTokens,
    countText(text: string): number {
      let tokens = memo.get(text);
      if (tokens === undefined) {
        tokens = counter.countText(text);
        memo.set(text, tokens);
      }
      return tokens;
    },
    countMessages(messages: readonly ChatMessage[]): number {
      return countFramedMessages(once, messages);
    },
  };
  return once;
}
