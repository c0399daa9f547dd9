import type { ChatMessage } from '@ask/ask-contracts';
import { MEMORY_ACK } from './plan-memory';
import type { ContextKind } from './trim';

/** A retrieved item as rendered into the prompt. */
export interface RenderableContextItem {
  kind: ContextKind;
  title: string;
  /** Cosine similarity, shown with two decimals. */
  score: number;
  text: string;
}

/**
 * The text form of one retrieved item in the prompt: a numbered header with kind, title and score,
 * then the text, then a blank line. Count the tokens of this string as the item's `tokens` for
 * `planPrompt`: `assembleMessages` concatenates the rendered items as they are.
 *
 * @param index the item's 0-based position, best first; the header shows it 1-based (`[1]`, `[2]`…).
 */
export function renderContextItem(item: RenderableContextItem, index: number): string {
  const title = item.title.replace(/\s+/g, ' ').trim();
  return `[${index + 1}] ${item.kind} · ${title} · score ${item.score.toFixed(2)}\n${item.text.trim()}\n\n`;
}

/** One kept earlier pair, as text. */
export interface HistoryPairText {
  question: string;
  answer: string;
}

/** What `assembleMessages` puts together. */
export interface AssembleInput {
  systemPrompt: string;
  /** Rendered kept items (`renderContextItem`), best first. */
  contextItems: readonly string[];
  /** Kept pairs, oldest → newest (the plan's `keptTurnIds`). */
  history: readonly HistoryPairText[];
  /** The current question. */
  question: string;
  /**
   * The memory block (summaries of earlier turns, `joinMemory`), sent as a user-role message right
   * after the system prompt, followed by the assistant's `MEMORY_ACK` (never in a system message:
   * it quotes user text); absent: none.
   */
  memory?: string;
}

/**
 * The messages of the upstream request: the system prompt first, then the memory block as a user
 * message and `MEMORY_ACK` as the assistant's (when memory rides), each kept pair as a user message
 * followed by its assistant answer, and a final user message holding the rendered context items (best
 * first) and then the question. The final message's content is exactly the concatenation whose parts
 * `planPrompt` was given counts for.
 *
 * Never returns an empty list (always at least the system and the final user message); the system
 * prompt is the only system message; after it, roles alternate user / assistant, ending with user.
 *
 * @throws RangeError when the question is blank: there is nothing to ask.
 */
export function assembleMessages(input: AssembleInput): ChatMessage[] {
  if (input.question.trim() === '') throw new RangeError('the question must not be blank');
  const messages: ChatMessage[] = [{ role: 'system', content: input.systemPrompt }];
  if (input.memory) messages.push({ role: 'user', content: input.memory }, { role: 'assistant', content: MEMORY_ACK });
  for (const pair of input.history) {
    messages.push({ role: 'user', content: pair.question }, { role: 'assistant', content: pair.answer });
  }
  messages.push({ role: 'user', content: `${input.contextItems.join('')}${input.question}` });
  return messages;
}
