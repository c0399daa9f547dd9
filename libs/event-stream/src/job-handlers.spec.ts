import { JobName, QueueName } from '@ask/ask-contracts';
import type { ContractJob } from './job-contract';
import { assertJobHandlers, dispatchJob, isLastAttempt, lastAttemptError, QUEUE_JOB_NAMES } from './job-handlers';

const job = <Q extends QueueName>(name: string, attemptsMade = 0, attempts = 5) =>
  ({ name, attemptsMade, opts: { attempts }, data: {} }) as unknown as ContractJob<Q>;

describe('job handlers (the workers’ one name guard)', () => {
  it('lists every queue of the contract with its job names', () => {
    expect(QUEUE_JOB_NAMES).toEqual({
      'ask-retrieval': ['retrieve'],
      'ask-synthesis': ['synthesize'],
      'ask-ingestion': ['ingest', 'reembed'],
      'ask-memory': ['summarize'],
    });
  });

  it('lets a worker boot with exactly one handler per job name', () => {
    const run = async () => undefined;
    expect(() => assertJobHandlers(QueueName.AskIngestion, { ingest: run, reembed: run })).not.toThrow();
  });

  it('fails the boot of a worker that leaves a job name unhandled, or handles one its queue does not carry', () => {
    const run = async () => undefined;
    expect(() => assertJobHandlers(QueueName.AskIngestion, { ingest: run })).toThrow(
      new Error('queue ask-ingestion: no handler for job reembed'),
    );
    expect(() => assertJobHandlers(QueueName.AskRetrieval, { retrieve: run, synthesize: run })).toThrow(
      new Error('queue ask-retrieval: handlers for jobs it does not carry: synthesize'),
    );
    expect(() => assertJobHandlers(QueueName.AskMemory, {})).toThrow(
      new Error('queue ask-memory: no handler for job summarize'),
    );
  });

  it('runs the handler of the job’s name, and rejects a name it has no handler for', async () => {
    const seen: string[] = [];
    const handlers = {
      [JobName.Ingest]: async (j: ContractJob<QueueName.AskIngestion>) => void seen.push(`ingest ${j.name}`),
      [JobName.Reembed]: async (j: ContractJob<QueueName.AskIngestion>) => void seen.push(`reembed ${j.name}`),
    };
    await dispatchJob(QueueName.AskIngestion, handlers, job('reembed'));
    await dispatchJob(QueueName.AskIngestion, handlers, job('ingest'));
    expect(seen).toEqual(['reembed reembed', 'ingest ingest']);
    await expect(dispatchJob(QueueName.AskIngestion, handlers, job('compact'))).rejects.toThrow(
      'unknown job compact on ask-ingestion',
    );
  });

  it('knows the last attempt, and ends it with a 500 whose error id is the logged one', () => {
    expect([isLastAttempt(job('x', 3, 5)), isLastAttempt(job('x', 4, 5)), isLastAttempt(job('x', 0, 1))]).toEqual([
      false,
      true,
      true,
    ]);
    const lines: string[] = [];
    const error = lastAttemptError({ attemptsMade: 4 }, 'ask a-1: retrieval', new Error('boom'), (l) => lines.push(l));
    const id = /^error_id=([0-9a-f-]{36})$/.exec(error.details ?? '')?.[1];
    expect([error.status, error.code, lines]).toEqual([
      500,
      'internal_error',
      [`ask a-1: retrieval: last attempt 5 failed (error_id=${id}): boom`],
    ]);
  });
});
