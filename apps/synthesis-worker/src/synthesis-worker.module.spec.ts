import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { removeKeysUnder, testKeyPrefix, testRedisUrl } from '@ask/testing';

// Integration: the worker's real module on a throwaway database and the machine's Redis (own prefix):
// it boots, which includes WorkerJobsModule's check that each job name of ask-synthesis and ask-memory
// has exactly one processor (event-stream job-processor.spec.ts shows the boot failing otherwise).
describe('SynthesisWorkerModule', () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  const prefix = testKeyPrefix('synthesis-worker-boot');

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await removeKeysUnder(testRedisUrl(), prefix);
    await db.drop();
  });

  it('boots with one processor per job name of its queues, and closes', async () => {
    Object.assign(process.env, { DATABASE_URL: db.url, REDIS_URL: testRedisUrl(), ASK_KEY_PREFIX: prefix });
    // The config is read when the processors' module loads (their @Processor options), so import it only now.
    const { SynthesisWorkerModule } = await import('./synthesis-worker.module');
    const { SynthesisProcessor } = await import('./synthesis/synthesis.processor');
    const { SummaryProcessor } = await import('./memory/summary.processor');
    const app: INestApplicationContext = await NestFactory.createApplicationContext(SynthesisWorkerModule, {
      logger: false,
    });
    try {
      expect([app.get(SynthesisProcessor).worker.name, app.get(SummaryProcessor).worker.name]).toEqual([
        'ask-synthesis',
        'ask-memory',
      ]);
    } finally {
      await app.close();
    }
  });
});
