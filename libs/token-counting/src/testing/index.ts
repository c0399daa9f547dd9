// The test and bench entry of token-counting (`@ask/token-counting/testing`): corpora, references, the held-out split, packing.
export * from './corpus';
export * from './split';
export * from './references';
export * from './pack';
