// Bundles the dashboard into apps/dashboard/dist, which the gateway serves at `/`
// (apps/api-gateway/src/dashboard/dashboard-static.module.ts). The error copy comes from
// @ask/ask-errors itself, so the page and the API can never disagree on it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/',
  resolve: { alias: { '@ask/ask-errors': here('../../libs/ask-errors/src/index.ts') } },
  build: { outDir: here('dist'), emptyOutDir: true, target: 'es2022', reportCompressedSize: true },
});
