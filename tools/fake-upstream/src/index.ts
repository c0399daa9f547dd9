export * from './fake-upstream';
export { FAKE_ANSWER, FAKE_ANSWER_CHUNKS, countPromptTokens, countTextTokens, windowOf } from './prompt';
export { ollamaShiftedPrompt } from './routes/ollama.routes';
