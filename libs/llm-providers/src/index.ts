export * from './types';
export * from './errors/upstream-errors';
export * from './errors/retry-after';
export * from './errors/classify-upstream-error';
export * from './errors/to-ask-error';
export * from './errors/embedding-failure';
export * from './stream-with-retry';
export * from './silent-truncation';
export * from './create-chat-provider';
export * from './create-embedding-provider';
export * from './egress/egress-policy';
export { missingCloudCredential } from './cloud-credentials';
export {
  CredentialSchemaError,
  GOOGLE_TOKEN_URL,
  parseServiceAccountJson,
  type ServiceAccountKey,
} from './vertex/vertex-credentials';
export { refusedName, refusedRange } from './egress/address-ranges';
export { OpenAiChatProvider, openAiCompatibleFetch } from './chat/openai-chat.provider';
export { OllamaChatProvider } from './chat/ollama-chat.provider';
export { AnthropicChatProvider } from './chat/anthropic-chat.provider';
export { BedrockChatProvider } from './chat/bedrock-chat.provider';
export { VertexGeminiChatProvider } from './vertex/vertex-gemini-chat.provider';
export { VertexClaudeChatProvider, VERTEX_ANTHROPIC_VERSION } from './vertex/vertex-claude-chat.provider';
export {
  vertexTokenSource,
  vertexHost,
  vertexLocation,
  vertexLocationPath,
  type TokenSource,
  type VertexTokenOptions,
} from './vertex/vertex-auth';
export { BedrockEmbeddingProvider } from './embedding/bedrock-embedding.provider';
export { VertexEmbeddingProvider } from './vertex/vertex-embedding.provider';
export { OpenAiEmbeddingProvider } from './embedding/openai-embedding.provider';
export { OllamaEmbeddingProvider } from './embedding/ollama-embedding.provider';
export { checkEmbeddings } from './embedding/check-embeddings';
export {
  checkEmbeddingLanguage,
  detectLanguage,
  detectLanguages,
  mainLanguage,
  type LanguageShare,
} from './embedding/check-embedding-language';
export { composeAnswer, LocalChatProvider, localChatCpuMicros } from './local/local-chat.provider';
export type { LocalChatOptions, StandInRelevance } from './local/local-chat.provider';
export { countLexicalTokens, LocalEmbeddingProvider } from './local/local-embedding.provider';
export {
  closeSemanticEmbeddingPools,
  LocalSemanticEmbeddingProvider,
  LOCAL_SEMANTIC_MODEL,
  LOCAL_SEMANTIC_DIMENSIONS,
} from './local/local-semantic-embedding.provider';
