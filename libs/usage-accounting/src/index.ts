export * from './normalize-usage';
export * from './call-cost';
