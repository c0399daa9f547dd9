export * from './ask-event-stream';
export * from './event-stream.module';
export * from './queues.module';
