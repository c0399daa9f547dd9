import { APP_CONFIG, type AppConfig } from '@ask/config';
import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CredentialsCipher } from './credentials-cipher';
import { dataSourceOptions, type DataSourceTuning } from './data-source';
import {
  ApiKeysRepository,
  IngestionsRepository,
  AsksRepository,
  InsightsRepository,
  KnowledgeRepository,
  LearnedWindowsRepository,
  ProjectsRepository,
  ProviderCallsRepository,
  RetrievalRepository,
  SessionsRepository,
  SummariesRepository,
  UsageRepository,
} from './repositories';

/** Every repository the module provides and exports. */
export const REPOSITORIES = [
  ProjectsRepository,
  ApiKeysRepository,
  SessionsRepository,
  RetrievalRepository,
  KnowledgeRepository,
  InsightsRepository,
  IngestionsRepository,
  UsageRepository,
  LearnedWindowsRepository,
  AsksRepository,
  ProviderCallsRepository,
  SummariesRepository,
];

/** Options of {@link PersistenceModule.forRoot}. */
export interface PersistenceModuleOptions extends DataSourceTuning {
  /** The settings it reads; default the app's injected config (`APP_CONFIG`, AppConfigModule). */
  config?: PersistenceSettings;
}

/** What the persistence layer reads of the config. */
type PersistenceSettings = Pick<AppConfig, 'DATABASE_URL' | 'ASK_ENCRYPTION_KEY'> &
  Partial<Pick<AppConfig, 'DATABASE_POOL_MAX' | 'DATABASE_CONNECT_TIMEOUT_MS'>>;

/**
 * Nest wiring of the persistence layer: one TypeORM DataSource (`TypeOrmModule.forRootAsync`, no
 * `synchronize`, no migrations on boot — run `persistence:migrate`), the credentials cipher keyed by
 * ASK_ENCRYPTION_KEY, and every repository, exported. Global: import it once, in the app's root
 * module; other modules (e.g. IngestionModule) inject the repositories without importing it.
 */
@Module({})
export class PersistenceModule {
  /** @throws EncryptionKeyInvalidError at boot when ASK_ENCRYPTION_KEY is set but not 32 bytes. */
  static forRoot(options: PersistenceModuleOptions = {}): DynamicModule {
    // The caller's settings, else the app's config (AppConfigModule is global).
    const inject = options.config ? [] : [APP_CONFIG];
    const configOf = (injected?: PersistenceSettings): PersistenceSettings => {
      const config = options.config ?? injected;
      if (!config) throw new Error('PersistenceModule: no config (import AppConfigModule, or pass options.config)');
      return config;
    };
    return {
      module: PersistenceModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject,
          // The pool's size and connect timeout are the operator's (DATABASE_POOL_MAX,
          // DATABASE_CONNECT_TIMEOUT_MS) unless the caller tunes them; the app names itself.
          useFactory: (injected?: PersistenceSettings) => {
            const config = configOf(injected);
            return dataSourceOptions(config, {
              poolSize: config.DATABASE_POOL_MAX,
              connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
              ...options,
            });
          },
        }),
      ],
      providers: [
        {
          provide: CredentialsCipher,
          inject,
          useFactory: (injected?: PersistenceSettings) => new CredentialsCipher(configOf(injected).ASK_ENCRYPTION_KEY),
        },
        ...REPOSITORIES,
      ],
      exports: [CredentialsCipher, ...REPOSITORIES],
    };
  }
}
