import { loadConfig, type AppConfig } from '@ask/config';
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
  /** The validated app config; default `loadConfig()` (process environment). */
  config?: Pick<AppConfig, 'DATABASE_URL' | 'ASK_ENCRYPTION_KEY'> &
    Partial<Pick<AppConfig, 'DATABASE_POOL_MAX' | 'DATABASE_CONNECT_TIMEOUT_MS'>>;
}

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
    const config = options.config ?? loadConfig();
    return {
      module: PersistenceModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          // The pool's size and connect timeout are the operator's (DATABASE_POOL_MAX,
          // DATABASE_CONNECT_TIMEOUT_MS) unless the caller tunes them; the app names itself.
          useFactory: () =>
            dataSourceOptions(config, {
              poolSize: config.DATABASE_POOL_MAX,
              connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
              ...options,
            }),
        }),
      ],
      providers: [
        { provide: CredentialsCipher, useFactory: () => new CredentialsCipher(config.ASK_ENCRYPTION_KEY) },
        ...REPOSITORIES,
      ],
      exports: [CredentialsCipher, ...REPOSITORIES],
    };
  }
}
