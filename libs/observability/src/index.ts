export * from './metrics';
export * from './health-server';
