import { Module } from '@nestjs/common';
import { QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, AppConfigModule, type AppConfig } from '@ask/config';
import { AskQueuesModule, EventStreamModule, WorkerJobsModule } from '@ask/event-stream';
import { IngestionModule } from '@ask/ingestion';
import {
  EmbeddingLedger,
  IngestionsRepository,
  InsightsRepository,
  KnowledgeRepository,
  PersistenceModule,
  ProjectsRepository,
  ProviderCallsRepository,
} from '@ask/persistence';
import { IngestionProcessor } from './ingestion/ingestion.processor';

/**
 * The ingestion worker: a BullMQ processor on `ask-ingestion` that chunks, embeds and stores uploads
 * and re-embeds projects, off the gateway's event loop. No HTTP server.
 */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot({ applicationName: 'ask-ingestion' }),
    EventStreamModule,
    AskQueuesModule.forQueues(QueueName.AskIngestion),
    // The boot fails unless every job name of the queues it consumes has exactly one processor.
    WorkerJobsModule.forQueues(QueueName.AskIngestion),
    // The ports of the ingestion lib, on the persistence layer; every embedding call is a provider_calls row.
    IngestionModule.forRoot({
      knowledge: KnowledgeRepository,
      insights: InsightsRepository,
      ingestions: IngestionsRepository,
      projects: ProjectsRepository,
      ledger: {
        inject: [ProviderCallsRepository, { token: APP_CONFIG, optional: true }],
        useFactory: (calls: ProviderCallsRepository, config?: AppConfig) =>
          new EmbeddingLedger(calls, config?.ASK_PRICE_OVERRIDES ?? []),
      },
    }),
  ],
  providers: [IngestionProcessor],
})
export class IngestionWorkerModule {}
