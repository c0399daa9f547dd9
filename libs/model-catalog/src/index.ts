export * from './types';
export * from './catalog-entry';
export * from './catalog';
export { HOSTED_CATALOG } from './catalog.hosted';
export { OLLAMA_CATALOG } from './catalog.ollama';
export * from './resolve-model';
export * from './prices';
export * from './metric-label';
