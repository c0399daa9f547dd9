import type { Route } from '../route';

/** Filled in by the next commit. */
export const vertexRoutes: readonly Route[] = [];
