/**
 * How a provider's wire reports token usage. Each convention is one documented shape:
 *
 * - `openai`: Chat Completions `usage` (OpenAI, Azure OpenAI / Foundry, OpenAI-compatible servers,
 *   Vertex MaaS): `prompt_tokens` INCLUDES `prompt_tokens_details.cached_tokens`;
 *   `completion_tokens` includes `completion_tokens_details.reasoning_tokens`
 *   (https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage).
 * - `anthropic`: Messages `usage` (Anthropic, Claude on Foundry and on Vertex): `input_tokens`
 *   EXCLUDES `cache_read_input_tokens` and `cache_creation_input_tokens`
 *   (https://docs.claude.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance).
 * - `bedrock`: Converse `TokenUsage`: `inputTokens` excludes `cacheReadInputTokens` and
 *   `cacheWriteInputTokens` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html).
 * - `gemini`: Vertex Gemini `usageMetadata`: `promptTokenCount` INCLUDES `cachedContentTokenCount`;
 *   `candidatesTokenCount` EXCLUDES `thoughtsTokenCount`
 *   (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/GenerateContentResponse#UsageMetadata).
 * - `ollama`: the final `/api/chat` line: `prompt_eval_count`, `eval_count` (no cache figures).
 * - `local`: the embedded stand-in's own counts `{ promptTokens, completionTokens }`.
 */
export type UsageConvention = 'openai' | 'anthropic' | 'bedrock' | 'gemini' | 'ollama' | 'local';

/**
 * One call's usage in the OpenTelemetry GenAI convention, in tokens:
 * `input` INCLUDES `cacheRead` and `cacheWrite` (`gen_ai.usage.input_tokens`); `output` INCLUDES
 * `reasoning` (`gen_ai.usage.output_tokens`). A bucket the provider does not report is 0.
 */
export interface NormalizedUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

/**
 * The provider reported a usage object that is negative, not an integer, or inconsistent with itself
 * (cached more than the prompt, reasoning more than the output, a total that is not the sum). The
 * object is kept in `raw` so the caller logs it as the provider sent it; nothing is clamped.
 */
export class InconsistentUsageError extends Error {
  override readonly name = 'InconsistentUsageError';

  constructor(
    readonly convention: UsageConvention,
    readonly reason: string,
    readonly raw: unknown,
  ) {
    super(`${convention} usage is inconsistent: ${reason}`);
  }
}

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A count field: absent/null → undefined; else a non-negative integer. @throws InconsistentUsageError */
function count(convention: UsageConvention, raw: unknown, obj: Fields | undefined, field: string): number | undefined {
  const value = obj?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new InconsistentUsageError(convention, `${field} is not an integer (${JSON.stringify(value)})`, raw);
  if (value < 0) throw new InconsistentUsageError(convention, `${field} is negative (${value})`, raw);
  return value;
}

function nested(obj: Fields, field: string): Fields | undefined {
  const value = obj[field];
  return isObject(value) ? value : undefined;
}

function check(convention: UsageConvention, raw: unknown, ok: boolean, reason: string): void {
  if (!ok) throw new InconsistentUsageError(convention, reason, raw);
}

/** Subsets never exceed their totals (input ⊇ cacheRead + cacheWrite, output ⊇ reasoning). */
function finish(convention: UsageConvention, raw: unknown, usage: NormalizedUsage): NormalizedUsage {
  check(
    convention,
    raw,
    usage.cacheRead + usage.cacheWrite <= usage.input,
    `cached input (${usage.cacheRead} read + ${usage.cacheWrite} written) exceeds input (${usage.input})`,
  );
  check(
    convention,
    raw,
    usage.reasoning <= usage.output,
    `reasoning (${usage.reasoning}) exceeds output (${usage.output})`,
  );
  return usage;
}

/**
 * Normalises one provider usage object, as the provider sent it, into {@link NormalizedUsage}
 * (OpenTelemetry GenAI: input includes cached, output includes reasoning).
 *
 * Anthropic turn 1 `{ input_tokens: 12, cache_creation_input_tokens: 3000 }` is input 3,012 (cache
 * write 3,000); turn 2 `{ input_tokens: 15, cache_read_input_tokens: 3000 }` is input 3,015 (cache
 * read 3,000). OpenAI `{ prompt_tokens: 3015, prompt_tokens_details: { cached_tokens: 3000 } }` is
 * input 3,015 (cache read 3,000): its prompt count already holds the cached part.
 *
 * @param raw the provider's usage object (`usage`, `usageMetadata`, Ollama's final line, …).
 * @returns null when the provider reported no usage at all (`raw` null/undefined, or none of the
 *   convention's input and output fields present), else the buckets in tokens.
 * @throws InconsistentUsageError for a negative or non-integer count, a subset larger than its total,
 *   or a reported total that is not the sum of its parts. Never clamps.
 */
export function normalizeUsage(convention: UsageConvention, raw: unknown): NormalizedUsage | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) throw new InconsistentUsageError(convention, 'usage is not an object', raw);
  const c = (obj: Fields | undefined, field: string) => count(convention, raw, obj, field);
  switch (convention) {
    case 'openai': {
      const prompt = c(raw, 'prompt_tokens');
      const completion = c(raw, 'completion_tokens');
      if (prompt === undefined && completion === undefined) return null;
      const input = prompt ?? 0;
      const output = completion ?? 0;
      const promptDetails = nested(raw, 'prompt_tokens_details');
      const total = c(raw, 'total_tokens');
      if (total !== undefined)
        check(
          convention,
          raw,
          total === input + output,
          `total_tokens ${total} is not prompt_tokens + completion_tokens (${input + output})`,
        );
      return finish(convention, raw, {
        input,
        cacheRead: c(promptDetails, 'cached_tokens') ?? 0,
        // Azure's Responses-style details name the cache write; Chat Completions has none.
        cacheWrite: c(promptDetails, 'cache_write_tokens') ?? 0,
        output,
        reasoning: c(nested(raw, 'completion_tokens_details'), 'reasoning_tokens') ?? 0,
      });
    }
    case 'anthropic': {
      const fresh = c(raw, 'input_tokens');
      const output = c(raw, 'output_tokens');
      const cacheRead = c(raw, 'cache_read_input_tokens') ?? 0;
      const cacheWrite = c(raw, 'cache_creation_input_tokens') ?? 0;
      if (fresh === undefined && output === undefined) return null;
      return finish(convention, raw, {
        input: (fresh ?? 0) + cacheRead + cacheWrite,
        cacheRead,
        cacheWrite,
        output: output ?? 0,
        reasoning: 0,
      });
    }
    case 'bedrock': {
      const fresh = c(raw, 'inputTokens');
      const output = c(raw, 'outputTokens');
      if (fresh === undefined && output === undefined) return null;
      const cacheRead = c(raw, 'cacheReadInputTokens') ?? 0;
      const cacheWrite = c(raw, 'cacheWriteInputTokens') ?? 0;
      const input = (fresh ?? 0) + cacheRead + cacheWrite;
      const total = c(raw, 'totalTokens');
      if (total !== undefined) {
        // AWS documents totalTokens as input + output; with caching it is reported with the cached parts.
        const sums = [input + (output ?? 0), (fresh ?? 0) + (output ?? 0)];
        check(
          convention,
          raw,
          sums.includes(total),
          `totalTokens ${total} is neither inputTokens + outputTokens (${sums[1]}) nor that with the cache (${sums[0]})`,
        );
      }
      return finish(convention, raw, { input, cacheRead, cacheWrite, output: output ?? 0, reasoning: 0 });
    }
    case 'gemini': {
      const prompt = c(raw, 'promptTokenCount');
      const candidates = c(raw, 'candidatesTokenCount');
      const thoughts = c(raw, 'thoughtsTokenCount') ?? 0;
      if (prompt === undefined && candidates === undefined) return null;
      const toolPrompt = c(raw, 'toolUsePromptTokenCount') ?? 0;
      const input = (prompt ?? 0) + toolPrompt;
      const output = (candidates ?? 0) + thoughts;
      const total = c(raw, 'totalTokenCount');
      if (total !== undefined)
        check(
          convention,
          raw,
          total === input + output,
          `totalTokenCount ${total} is not prompt + tool prompt + candidates + thoughts (${input + output})`,
        );
      return finish(convention, raw, {
        input,
        cacheRead: c(raw, 'cachedContentTokenCount') ?? 0,
        cacheWrite: 0,
        output,
        reasoning: thoughts,
      });
    }
    case 'ollama': {
      const prompt = c(raw, 'prompt_eval_count');
      const output = c(raw, 'eval_count');
      if (prompt === undefined && output === undefined) return null;
      return finish(convention, raw, {
        input: prompt ?? 0,
        cacheRead: 0,
        cacheWrite: 0,
        output: output ?? 0,
        reasoning: 0,
      });
    }
    case 'local': {
      const prompt = c(raw, 'promptTokens');
      const output = c(raw, 'completionTokens');
      if (prompt === undefined && output === undefined) return null;
      return finish(convention, raw, {
        input: prompt ?? 0,
        cacheRead: 0,
        cacheWrite: 0,
        output: output ?? 0,
        reasoning: 0,
      });
    }
  }
}
