import { Module } from '@nestjs/common';
import { QueueName } from '@ask/ask-contracts';
import { AppConfigModule } from '@ask/config';
import { AskQueuesModule, EventStreamModule, WorkerJobsModule } from '@ask/event-stream';
import { PersistenceModule } from '@ask/persistence';
import { SummaryProcessor } from './memory/summary.processor';
import { SummaryProducer } from './memory/summary.producer';
import { SummaryService } from './memory/summary.service';
import { SynthesisProcessor } from './synthesis/synthesis.processor';
import { SynthesisService } from './synthesis/synthesis.service';

/**
 * The synthesis worker: BullMQ processors on `ask-synthesis` (answers, and the extractive summary of
 * each stored pair right after its `done`) and `ask-memory` (the summaries a provider writes, enqueued
 * after `done`). No HTTP server beyond its health port.
 */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot({ applicationName: 'ask-synthesis' }),
    EventStreamModule,
    AskQueuesModule.forQueues(QueueName.AskSynthesis, QueueName.AskMemory),
    // The boot fails unless every job name of the queues it consumes has exactly one processor.
    WorkerJobsModule.forQueues(QueueName.AskSynthesis, QueueName.AskMemory),
  ],
  providers: [SynthesisService, SynthesisProcessor, SummaryProducer, SummaryService, SummaryProcessor],
})
export class SynthesisWorkerModule {}
