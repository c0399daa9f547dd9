// The counter interface and the message shape live in the pure @ask/ask-contracts (the pure libs plan
// with them); this lib, which loads tokenizer files, re-exports them for its own counters and callers.
export { type ChatMessage, type ChatRole, countFramedMessages, type TokenCounter } from '@ask/ask-contracts';
