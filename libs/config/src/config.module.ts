import { Global, Module } from '@nestjs/common';
import { type AppConfig, appConfig } from './config';

/** Injection token of the validated {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Provides the validated config to every Nest app: the process's one parse ({@link appConfig}), so a
 * bad environment fails the boot with a message naming the variable, and the config a class injects is
 * the one its decorator options were read from.
 */
@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: (): AppConfig => appConfig() }],
  exports: [APP_CONFIG],
})
export class AppConfigModule {}
