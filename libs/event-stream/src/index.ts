export * from './ask-event-relay';
export * from './ask-event-stream';
export * from './deadline-publish';
export * from './event-stream.module';
export * from './ingestion-event-stream';
export * from './queues.module';
export * from './stream-hub';
export * from './stream-ids';
