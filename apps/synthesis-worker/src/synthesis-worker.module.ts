import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, AppConfigModule, type AppConfig } from '@ask/config';
import { EventStreamModule } from '@ask/event-stream';
import { PersistenceModule } from '@ask/persistence';
import { SynthesisProcessor } from './synthesis/synthesis.processor';
import { SynthesisService } from './synthesis/synthesis.service';

/** The synthesis worker: a BullMQ processor on `ask-synthesis`. No HTTP server beyond its health port. */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot(),
    EventStreamModule,
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ connection: { url: config.REDIS_URL }, prefix: config.ASK_KEY_PREFIX }),
    }),
    BullModule.registerQueue({ name: QueueName.AskSynthesis }),
  ],
  providers: [SynthesisService, SynthesisProcessor],
})
export class SynthesisWorkerModule {}
