import {
  type BedrockRuntimeClient,
  ConverseStreamCommand,
  type Message,
  type SystemContentBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { throwIfAborted, UpstreamStreamError } from '../errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest, UsageChunk } from '../types';
import { splitSystem } from '../wire/messages';

/** Stop reasons that mean the answer was withheld for content (Converse `StopReason`). */
const FILTERED_STOPS = new Set(['content_filtered', 'guardrail_intervened']);

/**
 * Amazon Bedrock ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html)
 * through `@aws-sdk/client-bedrock-runtime`: SigV4 signing and the SDK's credential chain (static keys
 * from the project's credentials, else environment / profile / instance role), event-stream decoding.
 *
 * The system prompt goes in `system`; turns in `messages` as text content blocks; `inferenceConfig.maxTokens`
 * is the completion budget. Yields `contentBlockDelta` texts, then usage from the `metadata` event
 * (`inputTokens` / `outputTokens`).
 *
 * @throws the SDK's ServiceException (ValidationException, ThrottlingException, … over HTTP or inside
 *   the stream); UpstreamStreamError `incomplete` without `messageStop` and `metadata`, `content_filter`
 *   for a `content_filtered` / `guardrail_intervened` stop; the abort error when `request.signal` fires.
 */
export class BedrockChatProvider implements ChatProvider {
  readonly provider = 'bedrock' as const;

  /** @param client a client with `maxAttempts: 1` (retries are `streamWithRetry`'s). */
  constructor(private readonly client: BedrockRuntimeClient) {}

  async *streamChat(request: ChatRequest): AsyncGenerator<ChatChunk> {
    const { system, turns } = splitSystem(request.messages);
    const messages: Message[] = turns.map((m) => ({
      role: m.role === 'assistant' ? 'assistant' : 'user',
      content: [{ text: m.content }],
    }));
    const systemBlocks: SystemContentBlock[] | undefined = system !== undefined ? [{ text: system }] : undefined;
    const output = await this.client.send(
      new ConverseStreamCommand({
        modelId: request.model,
        messages,
        system: systemBlocks,
        inferenceConfig: { maxTokens: request.maxTokens },
      }),
      { abortSignal: request.signal },
    );
    let stopped = false;
    let usage: UsageChunk | undefined;
    let finishReason: string | undefined;
    for await (const event of output.stream ?? []) {
      const text = event.contentBlockDelta?.delta?.text;
      if (text) yield { type: 'delta', text };
      if (event.messageStop) {
        stopped = true;
        finishReason = event.messageStop.stopReason;
        if (event.messageStop.stopReason && FILTERED_STOPS.has(event.messageStop.stopReason)) {
          throw new UpstreamStreamError(
            'bedrock',
            'content_filter',
            `bedrock: the answer was stopped (${event.messageStop.stopReason})`,
          );
        }
      }
      if (event.metadata) {
        const u = event.metadata.usage;
        // Converse's inputTokens excludes cache reads and writes: the prompt is their sum.
        const prompt =
          u?.inputTokens === undefined
            ? null
            : u.inputTokens + (u.cacheReadInputTokens ?? 0) + (u.cacheWriteInputTokens ?? 0);
        usage = {
          type: 'usage',
          promptTokens: prompt,
          completionTokens: u?.outputTokens ?? null,
          raw: u,
          convention: 'bedrock',
        };
      }
    }
    throwIfAborted(request.signal);
    if (!stopped || !usage)
      throw new UpstreamStreamError(
        'bedrock',
        'incomplete',
        'bedrock: the stream ended without messageStop and metadata',
      );
    yield { ...usage, finishReason };
  }
}
