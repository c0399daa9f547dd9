import { Module } from '@nestjs/common';
import { QueueName } from '@ask/ask-contracts';
import { AppConfigModule } from '@ask/config';
import { AskQueuesModule, EventStreamModule } from '@ask/event-stream';
import { PersistenceModule } from '@ask/persistence';
import { SynthesisProcessor } from './synthesis/synthesis.processor';
import { SynthesisService } from './synthesis/synthesis.service';

/** The synthesis worker: a BullMQ processor on `ask-synthesis`. No HTTP server beyond its health port. */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot(),
    EventStreamModule,
    AskQueuesModule.forQueues(QueueName.AskSynthesis),
  ],
  providers: [SynthesisService, SynthesisProcessor],
})
export class SynthesisWorkerModule {}
