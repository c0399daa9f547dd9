/**
 * `@ask/llm-providers/testing`: the adapters' contract helpers for specs (the shared chat contract, an
 * egress policy allow-listing loopback servers, the door to tools/fake-upstream). A test-only entry:
 * `src/index.ts` does not export it, so no production bundle reaches it, and the boundary rules let only
 * specs, `testing/` helpers and benches import it (it pulls in the test tool tools/fake-upstream).
 */
export * from './chat-contract';
export * from './egress';
export * from './fake-upstream';
