import { Module } from '@nestjs/common';
import { IngestionService } from './ingestion.service';

/**
 * Provides {@link IngestionService}. Needs the repositories of `PersistenceModule.forRoot()`, which
 * registers them globally; import that once in the app.
 */
@Module({ providers: [IngestionService], exports: [IngestionService] })
export class IngestionModule {}
