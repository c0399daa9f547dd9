import { Global, Module } from '@nestjs/common';
import { type AppConfig, loadConfig } from './config';

/** Injection token of the validated {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Provides the validated config to every Nest app. Reading happens once, at module load, so a bad
 * environment fails the boot with a message naming the variable.
 */
@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: (): AppConfig => loadConfig() }],
  exports: [APP_CONFIG],
})
export class AppConfigModule {}
