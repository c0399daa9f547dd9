import type { Route } from '../route';

/** Filled in by the next commit. */
export const bedrockRoutes: readonly Route[] = [];
