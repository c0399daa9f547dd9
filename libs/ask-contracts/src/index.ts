export * from './queues';
export * from './events';
export * from './queue-options';
export * from './retrieval';
export * from './ingestion-events';
export * from './memory';
export * from './health';
export * from './usage';
