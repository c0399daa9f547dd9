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
