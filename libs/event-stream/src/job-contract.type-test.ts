/**
 * Compile-time proof that the job contract (ask-contracts `JobPayloads`, typed here by
 * job-contract.ts) rejects a wrong pairing: each `@ts-expect-error` line must fail to compile, or
 * `tsc` (CI's type-check) reports the directive as unused. The correct pairings below must compile.
 * Never run: only type-checked.
 */
import {
  JobName,
  QueueName,
  type IngestJobData,
  type RetrieveJobData,
  type SynthesizeJobData,
} from '@ask/ask-contracts';
import { type ContractJob, type ContractQueue, enqueueJob } from './job-contract';

declare const retrieval: ContractQueue<QueueName.AskRetrieval>;
declare const synthesis: ContractQueue<QueueName.AskSynthesis>;
declare const ingestion: ContractQueue<QueueName.AskIngestion>;
declare const retrieve: RetrieveJobData;
declare const synthesize: SynthesizeJobData;
declare const ingest: IngestJobData;

export async function pairings(): Promise<void> {
  await enqueueJob(retrieval, JobName.Retrieve, retrieve);
  await enqueueJob(synthesis, JobName.Synthesize, synthesize);
  await enqueueJob(ingestion, JobName.Ingest, ingest);
  await enqueueJob(ingestion, JobName.Reembed, ingest);

  // @ts-expect-error a synthesis job on the retrieval queue
  await enqueueJob(retrieval, JobName.Synthesize, synthesize);
  // @ts-expect-error a retrieval payload (no items) for a synthesis job
  await enqueueJob(synthesis, JobName.Synthesize, retrieve);
  // @ts-expect-error an ingestion payload on the retrieval queue
  await enqueueJob(retrieval, JobName.Retrieve, ingest);
  // @ts-expect-error BullMQ's own add is typed by the contract too
  await retrieval.add(JobName.Ingest, ingest);
}

export function processors(job: ContractJob<QueueName.AskSynthesis>): string {
  // @ts-expect-error a synthesis job carries no ingestion id
  const wrong: string = job.data.ingestionId;
  return job.data.items.length > 0 ? job.data.askId : wrong;
}
