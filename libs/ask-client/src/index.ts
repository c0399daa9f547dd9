export * from './ask-client';
