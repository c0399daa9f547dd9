import { Module } from '@nestjs/common';
import { QueueName } from '@ask/ask-contracts';
import { AppConfigModule } from '@ask/config';
import { AskQueuesModule, EventStreamModule, WorkerJobsModule } from '@ask/event-stream';
import { IngestionModule } from '@ask/ingestion';
import { PersistenceModule } from '@ask/persistence';
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
    IngestionModule,
  ],
  providers: [IngestionProcessor],
})
export class IngestionWorkerModule {}
