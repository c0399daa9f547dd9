import { type DynamicModule, type FactoryProvider, Module, type Provider, type Type } from '@nestjs/common';
import { IngestionRunner } from './ingestion-runner';
import { IngestionService } from './ingestion.service';
import {
  EMBEDDING_CALL_LEDGER,
  type EmbeddingCallLedger,
  INGESTIONS_STORE,
  type IngestionsStore,
  INSIGHTS_STORE,
  type InsightsStore,
  KNOWLEDGE_STORE,
  type KnowledgeStore,
  PROJECTS_STORE,
  type ProjectsStore,
} from './ports';
import { ReembedService } from './reembed.service';

/** The data layer behind the ports: providers the app registers (e.g. `PersistenceModule`'s repositories). */
export interface IngestionStores {
  knowledge: Type<KnowledgeStore>;
  insights: Type<InsightsStore>;
  ingestions: Type<IngestionsStore>;
  projects: Type<ProjectsStore>;
  /** Builds the ledger recording each embedding call of a run; without it, calls are not recorded. */
  ledger?: Omit<FactoryProvider<EmbeddingCallLedger>, 'provide'>;
}

/**
 * Provides {@link IngestionService}, {@link ReembedService} and {@link IngestionRunner} over the
 * stores the app passes to {@link IngestionModule.forRoot} (each must be a provider the app
 * registers, e.g. globally by `PersistenceModule.forRoot()`).
 */
@Module({})
export class IngestionModule {
  static forRoot(stores: IngestionStores): DynamicModule {
    const providers: Provider[] = [
      { provide: KNOWLEDGE_STORE, useExisting: stores.knowledge },
      { provide: INSIGHTS_STORE, useExisting: stores.insights },
      { provide: INGESTIONS_STORE, useExisting: stores.ingestions },
      { provide: PROJECTS_STORE, useExisting: stores.projects },
      ...(stores.ledger ? [{ provide: EMBEDDING_CALL_LEDGER, ...stores.ledger }] : []),
      IngestionService,
      ReembedService,
      IngestionRunner,
    ];
    return {
      module: IngestionModule,
      providers,
      exports: [IngestionService, ReembedService, IngestionRunner],
    };
  }
}
