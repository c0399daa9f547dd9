import { AskError, AskErrorCode } from '@ask/ask-errors';

/** Seconds a client refused by a stream cap is told to wait (`Retry-After`). */
const RETRY_AFTER_S = 5;

/** The `limit=` names a refusal gives, per stream and per project. */
export interface StreamCapNames {
  perStream: string;
  perProject: string;
}

/** The ask streams' names (`streams_per_ask`, `streams_per_project`). */
export const ASK_STREAM_CAPS: StreamCapNames = { perStream: 'streams_per_ask', perProject: 'streams_per_project' };

/**
 * Caps on concurrent event streams of one gateway process: per streamed thing (an ask, or an
 * ingestion; ASK_STREAMS_PER_ASK) and per project (ASK_STREAMS_PER_PROJECT). Counted in memory: each
 * gateway replica enforces its own caps; each route keeps its own instance, so ask and ingestion
 * streams are counted apart.
 */
export class StreamCaps {
  private readonly perAsk = new Map<string, number>();
  private readonly perProject = new Map<string, number>();

  constructor(
    private readonly limits: { perAsk: number; perProject: number },
    private readonly names: StreamCapNames = ASK_STREAM_CAPS,
  ) {}

  /**
   * Takes one stream slot of the ask (or ingestion) and of its project; returns the function that
   * gives it back (idempotent).
   * @throws AskError 429 `rate_limited`, `details` `limit=<name> max=N retry_after=5` (the names given
   *   at construction, by default `streams_per_ask` / `streams_per_project`), when either cap is reached.
   */
  acquire(askId: string, projectId: string): () => void {
    const askOpen = this.perAsk.get(askId) ?? 0;
    const projectOpen = this.perProject.get(projectId) ?? 0;
    if (askOpen >= this.limits.perAsk) throw capReached(this.names.perStream, this.limits.perAsk);
    if (projectOpen >= this.limits.perProject) throw capReached(this.names.perProject, this.limits.perProject);
    this.perAsk.set(askId, askOpen + 1);
    this.perProject.set(projectId, projectOpen + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.perAsk, askId);
      decrement(this.perProject, projectId);
    };
  }

  /** Open streams of an ask and of a project (0 when none). */
  open(askId: string, projectId: string): { ask: number; project: number } {
    return { ask: this.perAsk.get(askId) ?? 0, project: this.perProject.get(projectId) ?? 0 };
  }
}

function capReached(limit: string, max: number): AskError {
  return new AskError(AskErrorCode.RateLimited, { details: `limit=${limit} max=${max} retry_after=${RETRY_AFTER_S}` });
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 1) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
