import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, AppConfigModule, type AppConfig } from '@ask/config';
import { EventStreamModule } from '@ask/event-stream';
import { IngestionModule } from '@ask/ingestion';
import { PersistenceModule } from '@ask/persistence';
import { AskController } from './asks/ask.controller';
import { AskRetrievalProducer } from './asks/ask-retrieval.producer';
import { AskService } from './asks/ask.service';
import { HealthController } from './health/health.controller';
import { KnowledgeController } from './knowledge/knowledge.controller';
import { ProjectsController } from './projects/projects.controller';
import { ProjectsService } from './projects/projects.service';
import { SessionsController } from './sessions/sessions.controller';
import { DashboardStaticModule } from './dashboard/dashboard-static.module';

/** The API gateway: HTTP routes, the retrieval producer, and the SSE relay of ask events. */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot(),
    EventStreamModule,
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ connection: { url: config.REDIS_URL }, prefix: config.ASK_KEY_PREFIX }),
    }),
    BullModule.registerQueue({ name: QueueName.AskRetrieval }),
    IngestionModule,
    DashboardStaticModule,
  ],
  controllers: [ProjectsController, AskController, SessionsController, KnowledgeController, HealthController],
  providers: [ProjectsService, AskService, AskRetrievalProducer],
})
export class AppModule {}
