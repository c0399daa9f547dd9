import { Module } from '@nestjs/common';
import { QueueName } from '@ask/ask-contracts';
import { AppConfigModule } from '@ask/config';
import { AskQueuesModule, EventStreamModule, WorkerJobsModule } from '@ask/event-stream';
import { PersistenceModule } from '@ask/persistence';
import { AskReconciler } from './reconcile/ask-reconciler.service';
import { AskSynthesisProducer } from './retrieval/ask-synthesis.producer';
import { RetrievalProcessor } from './retrieval/retrieval.processor';
import { RetrievalService } from './retrieval/retrieval.service';

/**
 * The retrieval worker: a BullMQ processor on `ask-retrieval`, producing to `ask-synthesis`, and the
 * reconciler of accepted asks with Redis (AskReconciler). No HTTP server.
 */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot({ applicationName: 'ask-retrieval' }),
    EventStreamModule,
    AskQueuesModule.forQueues(QueueName.AskRetrieval, QueueName.AskSynthesis),
    // The boot fails unless every job name of the queues it consumes has exactly one processor.
    WorkerJobsModule.forQueues(QueueName.AskRetrieval),
  ],
  providers: [RetrievalService, RetrievalProcessor, AskSynthesisProducer, AskReconciler],
})
export class RetrievalWorkerModule {}
