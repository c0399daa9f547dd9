export * from './config';
export * from './config.module';
export * from './egress';
export * from './ambient-credentials';
