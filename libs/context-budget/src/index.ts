export * from './budget';
export * from './trim';
export * from './plan-prompt';
export * from './assemble';
