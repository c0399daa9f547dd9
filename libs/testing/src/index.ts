/**
 * Test-only helpers shared by specs, e2e suites and benches (tag `scope:testing`: production code
 * cannot import it; eslint.config.mjs allows it only in specs, e2e, benches and tools).
 */
export * from './seeded-random';
export * from './http-reply';
export * from './redis-keys';
export * from './test-redis';
