import type { ChatMessage } from '@ask/token-counting';

/** A request's system text and its user/assistant turns, for wires that take the system prompt apart. */
export interface SplitMessages {
  /** All system messages joined by a blank line, or undefined when there are none. */
  system: string | undefined;
  /** The user and assistant messages, in order. */
  turns: ChatMessage[];
}

/**
 * Separates system messages from the turns. Anthropic (`system`), Gemini (`systemInstruction`) and
 * Bedrock Converse (`system`) take the system prompt outside the message list.
 */
export function splitSystem(messages: readonly ChatMessage[]): SplitMessages {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  return {
    system: system.length > 0 ? system.join('\n\n') : undefined,
    turns: messages.filter((m) => m.role !== 'system'),
  };
}
