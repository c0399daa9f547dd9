#!/usr/bin/env node
// Runs a TypeScript entry point of this monorepo without a build step: SWC compiles each file as it is
// required (decorator metadata on, for NestJS DI) and the @ask/* aliases of tsconfig.base.json resolve.
// Usage: node tools/run-ts.js apps/api-gateway/src/main.ts [args...]
const path = require('node:path');
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || path.join(__dirname, '..', 'tsconfig.json');
require('@swc-node/register');
const entry = process.argv[2];
if (!entry) {
  console.error('usage: node tools/run-ts.js <entry.ts> [args...]');
  process.exit(2);
}
process.argv.splice(1, 2, path.resolve(entry));
require(path.resolve(entry));
