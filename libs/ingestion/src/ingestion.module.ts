import { Module } from '@nestjs/common';
import { IngestionRunner } from './ingestion-runner';
import { IngestionService } from './ingestion.service';
import { ReembedService } from './reembed.service';

/**
 * Provides {@link IngestionService}, {@link ReembedService} and {@link IngestionRunner}. Needs the
 * repositories of `PersistenceModule.forRoot()`, which registers them globally; import that once in
 * the app.
 */
@Module({
  providers: [IngestionService, ReembedService, IngestionRunner],
  exports: [IngestionService, ReembedService, IngestionRunner],
})
export class IngestionModule {}
