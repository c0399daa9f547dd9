export * from './queues';
export * from './events';
