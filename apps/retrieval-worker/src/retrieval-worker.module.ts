import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, AppConfigModule, type AppConfig } from '@ask/config';
import { EventStreamModule } from '@ask/event-stream';
import { PersistenceModule } from '@ask/persistence';
import { AskSynthesisProducer } from './retrieval/ask-synthesis.producer';
import { RetrievalProcessor } from './retrieval/retrieval.processor';
import { RetrievalService } from './retrieval/retrieval.service';

/** The retrieval worker: a BullMQ processor on `ask-retrieval`, producing to `ask-synthesis`. No HTTP server. */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot(),
    EventStreamModule,
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ connection: { url: config.REDIS_URL }, prefix: config.ASK_KEY_PREFIX }),
    }),
    BullModule.registerQueue({ name: QueueName.AskRetrieval }, { name: QueueName.AskSynthesis }),
  ],
  providers: [RetrievalService, RetrievalProcessor, AskSynthesisProducer],
})
export class RetrievalWorkerModule {}
