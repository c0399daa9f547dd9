import { InconsistentUsageError, normalizeUsage, type NormalizedUsage, type UsageConvention } from './normalize-usage';

/** Usage objects in each provider's documented shape (fields as the wire names them). */
const CASES: Array<{ name: string; convention: UsageConvention; raw: unknown; expected: NormalizedUsage | null }> = [
  {
    name: 'OpenAI: prompt_tokens already includes the cached tokens',
    convention: 'openai',
    raw: {
      prompt_tokens: 3015,
      completion_tokens: 120,
      total_tokens: 3135,
      prompt_tokens_details: { cached_tokens: 3000, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    expected: { input: 3015, cacheRead: 3000, cacheWrite: 0, output: 120, reasoning: 0 },
  },
  {
    name: 'OpenAI o-series: completion_tokens includes reasoning_tokens',
    convention: 'openai',
    raw: {
      prompt_tokens: 75,
      completion_tokens: 1186,
      total_tokens: 1261,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 1024 },
    },
    expected: { input: 75, cacheRead: 0, cacheWrite: 0, output: 1186, reasoning: 1024 },
  },
  {
    name: 'Azure OpenAI / OpenAI-compatible server without details',
    convention: 'openai',
    raw: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 },
    expected: { input: 19, cacheRead: 0, cacheWrite: 0, output: 10, reasoning: 0 },
  },
  {
    name: 'Anthropic turn 1: input 12 + cache write 3,000 = 3,012 input tokens',
    convention: 'anthropic',
    raw: { input_tokens: 12, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0, output_tokens: 48 },
    expected: { input: 3012, cacheRead: 0, cacheWrite: 3000, output: 48, reasoning: 0 },
  },
  {
    name: 'Anthropic turn 2: input 15 + cache read 3,000 = 3,015 input tokens',
    convention: 'anthropic',
    raw: { input_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 3000, output_tokens: 51 },
    expected: { input: 3015, cacheRead: 3000, cacheWrite: 0, output: 51, reasoning: 0 },
  },
  {
    name: 'Anthropic message_delta usage with nulls for the cache fields (Vertex Claude)',
    convention: 'anthropic',
    raw: { input_tokens: 472, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens: 89 },
    expected: { input: 472, cacheRead: 0, cacheWrite: 0, output: 89, reasoning: 0 },
  },
  {
    name: 'Bedrock Converse: inputTokens excludes cache reads and writes',
    convention: 'bedrock',
    raw: { inputTokens: 15, outputTokens: 40, totalTokens: 3055, cacheReadInputTokens: 3000, cacheWriteInputTokens: 0 },
    expected: { input: 3015, cacheRead: 3000, cacheWrite: 0, output: 40, reasoning: 0 },
  },
  {
    name: 'Bedrock Converse without caching',
    convention: 'bedrock',
    raw: { inputTokens: 125, outputTokens: 60, totalTokens: 185 },
    expected: { input: 125, cacheRead: 0, cacheWrite: 0, output: 60, reasoning: 0 },
  },
  {
    name: 'Vertex Gemini: promptTokenCount includes the cache; thoughts are output outside candidates',
    convention: 'gemini',
    raw: {
      promptTokenCount: 3015,
      candidatesTokenCount: 200,
      thoughtsTokenCount: 300,
      totalTokenCount: 3515,
      cachedContentTokenCount: 3000,
      trafficType: 'ON_DEMAND',
    },
    expected: { input: 3015, cacheRead: 3000, cacheWrite: 0, output: 500, reasoning: 300 },
  },
  {
    name: 'Vertex Gemini without thinking',
    convention: 'gemini',
    raw: { promptTokenCount: 9, candidatesTokenCount: 12, totalTokenCount: 21 },
    expected: { input: 9, cacheRead: 0, cacheWrite: 0, output: 12, reasoning: 0 },
  },
  {
    name: "Ollama's final line",
    convention: 'ollama',
    raw: {
      model: 'llama3.1:8b',
      done: true,
      done_reason: 'stop',
      total_duration: 5191566416,
      prompt_eval_count: 26,
      prompt_eval_duration: 383809000,
      eval_count: 298,
      eval_duration: 4799921000,
    },
    expected: { input: 26, cacheRead: 0, cacheWrite: 0, output: 298, reasoning: 0 },
  },
  {
    name: 'the local stand-in',
    convention: 'local',
    raw: { promptTokens: 812, completionTokens: 64 },
    expected: { input: 812, cacheRead: 0, cacheWrite: 0, output: 64, reasoning: 0 },
  },
  { name: 'no usage reported (null)', convention: 'openai', raw: null, expected: null },
  {
    name: 'an OpenAI-compatible server that sent an empty usage object',
    convention: 'openai',
    raw: {},
    expected: null,
  },
  { name: 'an Ollama line without counts', convention: 'ollama', raw: { done: true }, expected: null },
];

const BAD: Array<{ name: string; convention: UsageConvention; raw: unknown; reason: RegExp }> = [
  {
    name: 'a negative Anthropic bucket',
    convention: 'anthropic',
    raw: { input_tokens: -3, output_tokens: 4 },
    reason: /input_tokens is negative \(-3\)/,
  },
  {
    name: 'OpenAI cached more than the prompt',
    convention: 'openai',
    raw: { prompt_tokens: 100, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 3000 } },
    reason: /cached input \(3000 read \+ 0 written\) exceeds input \(100\)/,
  },
  {
    name: 'OpenAI total not the sum',
    convention: 'openai',
    raw: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 14 },
    reason: /total_tokens 14/,
  },
  {
    name: 'OpenAI reasoning above completion',
    convention: 'openai',
    raw: { prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 6 } },
    reason: /reasoning \(6\) exceeds output \(5\)/,
  },
  {
    name: 'Gemini total not the sum',
    convention: 'gemini',
    raw: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 2, totalTokenCount: 15 },
    reason: /totalTokenCount 15/,
  },
  {
    name: 'Bedrock total matching neither form',
    convention: 'bedrock',
    raw: { inputTokens: 10, outputTokens: 5, totalTokens: 99 },
    reason: /totalTokens 99/,
  },
  {
    name: 'a fractional Ollama count',
    convention: 'ollama',
    raw: { prompt_eval_count: 2.5, eval_count: 1 },
    reason: /prompt_eval_count is not an integer/,
  },
  {
    name: 'a count sent as a string',
    convention: 'local',
    raw: { promptTokens: '12', completionTokens: 1 },
    reason: /promptTokens is not an integer/,
  },
  { name: 'usage that is not an object', convention: 'openai', raw: 42, reason: /not an object/ },
];

describe(normalizeUsage.name, () => {
  it.each(CASES)('$name', ({ convention, raw, expected }) => {
    expect(normalizeUsage(convention, raw)).toEqual(expected);
  });

  it.each(BAD)('rejects $name with the raw object kept, never clamped', ({ convention, raw, reason }) => {
    let error: unknown;
    try {
      normalizeUsage(convention, raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InconsistentUsageError);
    expect((error as InconsistentUsageError).message).toMatch(reason);
    expect((error as InconsistentUsageError).raw).toBe(raw);
    expect((error as InconsistentUsageError).convention).toBe(convention);
  });
});
