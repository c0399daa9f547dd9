/** A chat message as sent to a provider. `content` is plain text. */
export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: ChatRole;
  content: string;
}

/**
 * Counts tokens the way one model's tokenizer does (exact) or estimates them (approximate).
 *
 * All figures are tokens. A counter is synchronous and local; providers whose only exact count is a
 * remote endpoint (Anthropic `count_tokens`, Vertex `:countTokens`) verify the assembled request in
 * libs/llm-providers after planning with a local counter.
 */
export interface TokenCounter {
  /** Stable id stored beside cached counts, e.g. `tiktoken:o200k_base`, `hf:llama3`, `approx:script-v1`. */
  readonly id: string;
  /** True when counts equal the model's tokenizer; decides the safety margin (5% exact, 15% approximate). */
  readonly exact: boolean;
  /** Tokens each message adds beyond its text (role markers, separators) in this counter's wire format. */
  readonly perMessageTokens: number;
  /** Tokens added once per request (reply priming). */
  readonly perRequestTokens: number;
  /** Tokens of a text, without any framing. */
  countText(text: string): number;
  /** Tokens of a whole request: Σ (countText(content) + perMessageTokens) + perRequestTokens. */
  countMessages(messages: readonly ChatMessage[]): number;
}

/**
 * Tokens of a whole request under a counter's framing: Σ (countText(content) + perMessageTokens) +
 * perRequestTokens. Every counter here implements `countMessages` with this, so a planner that caches
 * `countText(content)` per message gets the same figure by adding the framing itself.
 */
export function countFramedMessages(
  counter: Pick<TokenCounter, 'countText' | 'perMessageTokens' | 'perRequestTokens'>,
  messages: readonly ChatMessage[],
): number {
  let total = counter.perRequestTokens;
  for (const message of messages) total += counter.countText(message.content) + counter.perMessageTokens;
  return total;
}
