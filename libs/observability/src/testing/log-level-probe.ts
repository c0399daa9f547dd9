import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { registerSecrets } from '@ask/ask-errors';
import { loadConfig } from '@ask/config';
import { createNestJsonLogger } from '../json-logger';
import { withLogIds } from '../json-logger';

@Module({})
class ProbeModule {}

/**
 * Test probe (json-logger.spec.ts): boots a Nest application context with the apps' JSON logger at
 * the environment's LOG_LEVEL, then writes one line per level through Nest's `Logger`, inside an
 * ask's log ids, one of them holding a registered secret. Lines go to stdout.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const app = await NestFactory.createApplicationContext(ProbeModule, {
    logger: createNestJsonLogger({ app: 'probe', level: config.LOG_LEVEL }),
  });
  const secret = process.env.PROBE_SECRET ?? '';
  registerSecrets([secret]);
  const logger = new Logger('Probe');
  await withLogIds(
    {
      askId: '11111111-1111-4111-8111-111111111111',
      sessionId: '22222222-2222-4222-8222-222222222222',
      projectId: '33333333-3333-4333-8333-333333333333',
    },
    async () => {
      await Promise.resolve();
      logger.verbose('verbose line');
      logger.debug('debug line');
      logger.log(`log line with the key ${secret}`);
      logger.warn('warn line');
      logger.error('error line');
    },
  );
  await app.close();
}

void main();
