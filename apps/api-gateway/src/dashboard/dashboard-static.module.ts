import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Logger, Module } from '@nestjs/common';
import { ServeStaticModule, type ServeStaticModuleOptions } from '@nestjs/serve-static';

/** Where `nx run dashboard:build` writes the bundle (the gateway runs from source, see tools/run-ts.js). */
export const DASHBOARD_DIST = resolve(__dirname, '..', '..', '..', 'dashboard', 'dist');

/** Paths the dashboard never answers: the API and the operational routes keep their own 404s. */
export const DASHBOARD_EXCLUDE = ['/api{/*path}', '/health', '/metrics'];

/**
 * The static options for the dashboard bundle at `/`, or none when it has not been built: the gateway
 * boots either way and logs how to build it.
 */
export function dashboardStaticOptions(dist = DASHBOARD_DIST): ServeStaticModuleOptions[] {
  if (!existsSync(join(dist, 'index.html'))) {
    new Logger('dashboard').warn(`no dashboard bundle in ${dist}; run \`npx nx run dashboard:build\` to serve it at /`);
    return [];
  }
  return [{ rootPath: dist, exclude: DASHBOARD_EXCLUDE, serveStaticOptions: { index: 'index.html', maxAge: 0 } }];
}

/** Serves apps/dashboard/dist at `/` (not under /api, /health or /metrics). */
@Module({ imports: [ServeStaticModule.forRootAsync({ useFactory: () => dashboardStaticOptions() })] })
export class DashboardStaticModule {}
