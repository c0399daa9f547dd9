import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JobName, QueueName } from '@ask/ask-contracts';
import type { ContractJob } from './job-contract';
import type { JobHandlers } from './job-handlers';
import { assertOneProcessorPerJob, failedAttempt, JobProcessor, WorkerJobsModule } from './job-processor';

const run = async () => undefined;

/** A processor as the workers declare theirs, without a BullMQ worker behind it (no `@Processor`). */
abstract class Bare<Q extends QueueName> extends JobProcessor<Q> {
  protected concurrency(): number {
    return 1;
  }

  override onApplicationBootstrap(): void {
    // No BullMQ worker here to set the concurrency of.
  }
}

@Injectable()
class Synthesis extends Bare<QueueName.AskSynthesis> {
  readonly queue = QueueName.AskSynthesis;
  readonly handlers: JobHandlers<QueueName.AskSynthesis> = { [JobName.Synthesize]: run };
}

@Injectable()
class SynthesisAgain extends Bare<QueueName.AskSynthesis> {
  readonly queue = QueueName.AskSynthesis;
  readonly handlers: JobHandlers<QueueName.AskSynthesis> = { [JobName.Synthesize]: run };
}

@Injectable()
class Memory extends Bare<QueueName.AskMemory> {
  readonly queue = QueueName.AskMemory;
  readonly handlers: JobHandlers<QueueName.AskMemory> = { [JobName.Summarise]: run };
}

/** Boots a worker app consuming ask-synthesis and ask-memory with `processors`, as a worker's main.ts does. */
async function boot(...processors: Array<new (...args: never[]) => object>) {
  @Module({
    imports: [WorkerJobsModule.forQueues(QueueName.AskSynthesis, QueueName.AskMemory)],
    providers: processors,
  })
  class Worker {}
  return NestFactory.createApplicationContext(Worker, { logger: false, abortOnError: false });
}

describe(WorkerJobsModule.name, () => {
  it('lets a worker boot with exactly one processor per job name of its queues', async () => {
    const app = await boot(Synthesis, Memory);
    await app.close();
  });

  it('fails the boot of a worker with no processor for a job name of its queues', async () => {
    await expect(boot(Synthesis)).rejects.toThrow(new Error('worker jobs: ask-memory/summarize has no processor'));
  });

  it('fails the boot of a worker with two processors for one job name', async () => {
    await expect(boot(Synthesis, SynthesisAgain, Memory)).rejects.toThrow(
      new Error('worker jobs: ask-synthesis/synthesize has 2 processors (Synthesis, SynthesisAgain)'),
    );
  });
});

describe(assertOneProcessorPerJob.name, () => {
  const processor = (name: string, queue: QueueName, handlers: object) =>
    Object.assign(Object.create({ constructor: { name } }), { queue, handlers });

  it('names every job without a processor, every doubled one and every processor of an undeclared queue', () => {
    expect(() =>
      assertOneProcessorPerJob(
        [QueueName.AskIngestion],
        [
          processor('A', QueueName.AskIngestion, { ingest: run }),
          processor('B', QueueName.AskIngestion, { ingest: run }),
          processor('C', QueueName.AskRetrieval, { retrieve: run }),
        ],
      ),
    ).toThrow(
      new Error(
        'worker jobs: ask-ingestion/ingest has 2 processors (A, B); ask-ingestion/reembed has no processor; ' +
          'C consumes ask-retrieval, which this worker does not declare',
      ),
    );
  });
});

describe(failedAttempt.name, () => {
  const job = (attemptsMade: number) =>
    ({ attemptsMade, opts: { attempts: 3 } }) as unknown as ContractJob<QueueName.AskRetrieval>;

  it('logs and rethrows a failure before the last attempt, without ending the ask', async () => {
    const lines: string[] = [];
    const ended: unknown[] = [];
    const boom = new Error('boom');
    await expect(
      failedAttempt(
        job(0),
        'ask a-1: retrieval',
        boom,
        (l) => lines.push(l),
        async (e) => ended.push(e),
      ),
    ).rejects.toBe(boom);
    expect([lines, ended]).toEqual([['ask a-1: retrieval: attempt 1 failed: boom'], []]);
  });

  it('ends the ask on the last attempt with a 500 whose error id is the logged one, then rethrows', async () => {
    const lines: string[] = [];
    const ended: Array<{ status: number; code: string; details?: string }> = [];
    const boom = new Error('boom');
    await expect(
      failedAttempt(
        job(2),
        'ask a-1: retrieval',
        boom,
        (l) => lines.push(l),
        async (e) => ended.push(e),
      ),
    ).rejects.toBe(boom);
    const id = /^error_id=([0-9a-f-]{36})$/.exec(ended[0]?.details ?? '')?.[1];
    expect([ended.length, ended[0].status, ended[0].code, lines]).toEqual([
      1,
      500,
      'internal_error',
      [`ask a-1: retrieval: last attempt 3 failed (error_id=${id}): boom`],
    ]);
  });
});
