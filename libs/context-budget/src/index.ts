export * from './budget';
export * from './trim';
export * from './plan-prompt';
export * from './assemble';
export * from './size-prompt';
export * from './plan-memory';
export * from './extractive-summary';
export * from './relevance';
