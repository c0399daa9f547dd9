import type { RetrievalLegs } from './retrieval';

/**
 * Queue names and job payloads shared by the gateway and both workers.
 *
 * Queue names are permanent: renaming one strands the jobs waiting in it.
 */
export enum QueueName {
  /** Gateway → retrieval worker: embed the question and rank the project's items. */
  AskRetrieval = 'ask-retrieval',
  /** Retrieval worker → synthesis worker: budget the prompt, call the LLM, persist the turn. */
  AskSynthesis = 'ask-synthesis',
  /** Gateway (or CLI) → ingestion worker: chunk, embed and store an upload, or re-embed a project. */
  AskIngestion = 'ask-ingestion',
  /** Synthesis worker → itself, after `done`: summarise the stored pair and compact the session. */
  AskMemory = 'ask-memory',
}

/** Job names inside each queue (one handler each). */
export enum JobName {
  Retrieve = 'retrieve',
  Synthesize = 'synthesize',
  /** Chunk, embed and store the documents (or insights) of one stored upload. */
  Ingest = 'ingest',
  /** Rebuild every vector of a project from its stored text with the project's current embedding model. */
  Reembed = 'reembed',
  /** Summarise one stored pair and, in compaction, move the session summary forward. */
  Summarise = 'summarize',
}

/** Kinds of item the retrieval worker ranks. */
export type RetrievedKind = 'insight' | 'recommendation' | 'knowledge';

/** One ranked item handed from retrieval to synthesis. `score` is cosine similarity (1 − distance), in [−1, 1]. */
export interface RetrievedItem {
  id: string;
  kind: RetrievedKind;
  /** Display title: insight name, recommendation title, or knowledge source title. */
  title: string;
  /** The text that goes into the prompt (name + description for insights, chunk text for knowledge). */
  text: string;
  /** Cosine similarity of its embedding to the question's (1 − cosine distance), in [−1, 1]. */
  score: number;
  /** Where it came from, for citations (knowledge source path/URI), when known. */
  source?: string;
  /**
   * Knowledge chunks: the trail of headings above the chunk in its page (`Storage > Configuring
   * retention`), when it has one (chunks ingested before section paths were stored have none).
   */
  section?: string;
  /** Which retrieval legs found it and how it ranked there (absent for vector-only retrieval). */
  legs?: RetrievalLegs;
  /**
   * Token counts of `text` cached when it was stored, per token counter id (knowledge chunks carry
   * their {@link CHUNK_TOKEN_COUNTER_ID} count from ingestion), so planning need not count them again.
   */
  tokenCounts?: Record<string, number>;
}

/** The counter whose counts knowledge chunks store at ingestion: o200k_base, the chunker's unit. */
export const CHUNK_TOKEN_COUNTER_ID = 'tiktoken:o200k_base';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) of the span that enqueued a job, carried in
 * the job's data so the next process's spans join the same trace: `traceparent` is
 * `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`, `tracestate` the vendor list when any.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** Payload of the retrieval job. The ask id is also the BullMQ job id of both jobs. */
export interface RetrieveJobData {
  askId: string;
  projectId: string;
  sessionId: string;
  question: string;
  /** ISO time the gateway accepted the ask; the ask's deadline is measured from it. */
  acceptedAt: string;
  /**
   * The enqueuing span's trace context, present only when tracing is on (`ASK_TRACING=otlp`) in the
   * producing process; a job without it (tracing off, or re-enqueued by the reconciler) starts a new trace.
   */
  trace?: TraceContext;
}

/** Payload of the synthesis job: the retrieval payload plus the ranked items, best first. */
export interface SynthesizeJobData extends RetrieveJobData {
  items: RetrievedItem[];
}

/**
 * Payload of an ingestion job (`ingest` or `reembed`). The upload itself (documents, insights) is in
 * PostgreSQL (`ingestions`, `ingestion_documents`), not in Redis; the ingestion id is also the job id.
 */
export interface IngestJobData {
  ingestionId: string;
  projectId: string;
}

/**
 * Payload of a summary job, enqueued once `done` is published. The job id is `summary-<messageId>`,
 * so a retried synthesis never enqueues twice.
 */
export interface SummariseJobData {
  projectId: string;
  sessionId: string;
  /** The stored pair to summarise. */
  messageId: string;
  /** The ask whose answer it is (for logs). */
  askId: string;
  /**
   * The newest pair this ask's prompt did not carry verbatim or as a summary (dropped, or under the
   * session summary), or null when it carried every pair: the session summary must reach past it.
   */
  evictedUpTo: string | null;
}

/**
 * The job contract: each queue and the (job name, payload) pairs it carries, one union member per job
 * name. Producers and processors are typed through it (event-stream `ContractQueue`, `ContractJob`,
 * `enqueueJob`), so a wrong queue / name / payload pairing does not compile
 * (libs/event-stream/src/job-contract.type-test.ts proves it). A new queue joins here.
 */
export interface JobPayloads {
  [QueueName.AskRetrieval]: { name: JobName.Retrieve; data: RetrieveJobData };
  [QueueName.AskSynthesis]: { name: JobName.Synthesize; data: SynthesizeJobData };
  [QueueName.AskIngestion]:
    { name: JobName.Ingest; data: IngestJobData } | { name: JobName.Reembed; data: IngestJobData };
  [QueueName.AskMemory]: { name: JobName.Summarise; data: SummariseJobData };
}
