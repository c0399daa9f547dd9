export * from './codes';
export * from './ask-error';
export * from './factories';
export * from './sanitize';
export * from './redact';
