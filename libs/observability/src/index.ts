export * from './metrics';
export * from './health-server';
export * from './worker-bootstrap';
export * from './json-logger';
export * from './tracing';
export * from './ask-job';
export * from './usage-refusal';
