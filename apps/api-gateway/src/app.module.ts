import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, AppConfigModule, type AppConfig } from '@ask/config';
import { AskQueuesModule, EVENTS_REDIS, EventStreamModule, type RedisClient } from '@ask/event-stream';
import { PersistenceModule } from '@ask/persistence';
import { AskController } from './asks/ask.controller';
import { AskRetrievalProducer } from './asks/ask-retrieval.producer';
import { AskService } from './asks/ask.service';
import { AuthGuard } from './auth/auth.guard';
import { EventsTokenSigner, eventsSecret } from './auth/events-token';
import { KeysController } from './auth/keys.controller';
import { HealthController } from './health/health.controller';
import { IngestionProducer } from './knowledge/ingestion.producer';
import { KnowledgeController } from './knowledge/knowledge.controller';
import { KnowledgeService } from './knowledge/knowledge.service';
import { ProjectsController } from './projects/projects.controller';
import { ProjectsService } from './projects/projects.service';
import { SessionsController } from './sessions/sessions.controller';
import { SessionUsageController } from './usage/session-usage.controller';
import { UsageController } from './usage/usage.controller';
import { DashboardStaticModule } from './dashboard/dashboard-static.module';
import { ProjectThrottlerGuard, throttlerOptions } from './rate-limit/rate-limit';
import { ProcessStreams } from './sse/stream-caps';

/** The API gateway: HTTP routes, the retrieval and ingestion producers, and the SSE relays of ask and ingestion events. */
@Module({
  imports: [
    AppConfigModule,
    PersistenceModule.forRoot({ applicationName: 'ask-gateway' }),
    EventStreamModule,
    AskQueuesModule.forQueues(QueueName.AskRetrieval, QueueName.AskIngestion),
    DashboardStaticModule,
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, EVENTS_REDIS],
      useFactory: (config: AppConfig, redis: RedisClient) => throttlerOptions(config, redis),
    }),
  ],
  controllers: [
    ProjectsController,
    AskController,
    SessionsController,
    KnowledgeController,
    HealthController,
    KeysController,
    UsageController,
    SessionUsageController,
  ],
  providers: [
    ProjectsService,
    AskService,
    AskRetrievalProducer,
    KnowledgeService,
    IngestionProducer,
    {
      provide: EventsTokenSigner,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new EventsTokenSigner(eventsSecret(config)),
    },
    // Every open event stream of this process (ASK_STREAMS_PER_PROCESS) and its fleet-wide leases.
    {
      provide: ProcessStreams,
      inject: [EVENTS_REDIS, APP_CONFIG],
      useFactory: (redis: RedisClient, config: AppConfig) => new ProcessStreams(redis, config.ASK_STREAMS_PER_PROCESS),
    },
    // Order matters: authenticate first, then count the call against the project's rate limit.
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: ProjectThrottlerGuard },
  ],
})
export class AppModule {}
