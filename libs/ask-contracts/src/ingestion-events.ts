/**
 * Events on an ingestion's stream (Redis stream `ingestion:{ingestionId}:events`), relayed as SSE by
 * `GET /api/v1/projects/:projectId/ingestions/:ingestionId/events`. Like an ask's stream, every event
 * carries its Redis stream id as the SSE id, so `Last-Event-ID` resumes without gap or repeat.
 */
import type { ErrorEvent } from './events';

/** Redis key of an ingestion's event stream (after the key prefix). */
export const ingestionStreamKey = (ingestionId: string): string => `ingestion:${ingestionId}:events`;

/** What an ingestion loads: knowledge documents, insights and recommendations, or a re-embed of everything. */
export type IngestionKind = 'knowledge' | 'insights' | 'reembed';

/** Where an ingestion is. `completed` includes runs with per-document failures (see `documents.failed`). */
export type IngestionStatus = 'queued' | 'running' | 'completed' | 'failed';

/** Counts of an ingestion so far. Documents are knowledge documents, or insight/recommendation items. */
export interface IngestionCounts {
  /** Documents (or items) in the upload. */
  total: number;
  /** Documents finished: stored, replaced, unchanged or failed. */
  done: number;
  /** Documents stored for the first time (insights: written). */
  created: number;
  /** Documents whose chunks were replaced. */
  replaced: number;
  /** Documents skipped because their content hash was unchanged. */
  unchanged: number;
  /** Documents that failed (each has a `document_failed` event and a row in `failures`). */
  failed: number;
  /** Chunks (or item vectors) embedded and stored so far. */
  chunks: number;
}

/** The worker started the run. */
export interface IngestionStartedEvent {
  ingestionId: string;
  kind: IngestionKind;
  /** 1 on the first attempt; more when BullMQ retried the job after an infrastructure fault. */
  attempt: number;
  counts: IngestionCounts;
}

/** After each finished document (or item batch). */
export interface IngestionProgressEvent {
  counts: IngestionCounts;
  /** The document just finished, when there is one. */
  uri?: string;
}

/** One document could not be loaded; the others go on. The error is the typed body of libs/ask-errors. */
export interface DocumentFailedEvent {
  uri: string;
  error: ErrorEvent;
}

/** The run finished; `counts.failed` documents failed (listed before as `document_failed`). */
export interface IngestionDoneEvent {
  status: 'completed';
  counts: IngestionCounts;
}

export interface IngestionEventMap {
  started: IngestionStartedEvent;
  progress: IngestionProgressEvent;
  document_failed: DocumentFailedEvent;
  /** Terminal: the run finished. */
  done: IngestionDoneEvent;
  /** Terminal: the run stopped for a reason that is not one document's (credentials, rate limit, model switch…). */
  error: ErrorEvent;
}

export type IngestionEventType = keyof IngestionEventMap;

/** An event as read back from an ingestion's stream. `id` is the Redis stream id. */
export interface IngestionEvent<T extends IngestionEventType = IngestionEventType> {
  id: string;
  type: T;
  data: IngestionEventMap[T];
}

/** Events after which an ingestion's stream has ended. */
export const INGESTION_TERMINAL_EVENTS: ReadonlySet<IngestionEventType> = new Set(['done', 'error']);

/** One failed document as `GET …/ingestions/:id` lists it. */
export interface IngestionFailure {
  uri: string;
  error: ErrorEvent;
}

/** Body of `GET /api/v1/projects/:projectId/ingestions/:ingestionId`. */
export interface IngestionView {
  ingestionId: string;
  projectId: string;
  kind: IngestionKind;
  status: IngestionStatus;
  counts: IngestionCounts;
  failures: IngestionFailure[];
  /** Set when `status` is `failed`: why the run stopped. */
  error?: ErrorEvent;
  /** `provider/model` and vector length the run embedded with, once it started. */
  embedding?: { model: string; dimensions: number };
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
}

/** Body of the 202 of `POST …/knowledge`, `POST …/insights` and `POST …/reembed`. */
export interface IngestionAccepted {
  ingestionId: string;
  /** The ingestion's SSE progress stream (the same key as the POST opens it). */
  eventsUrl: string;
  /** The ingestion's status route. */
  statusUrl: string;
}
