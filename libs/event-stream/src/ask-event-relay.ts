import type { RedisClient } from './redis-connections';
import { type AskEvent, type AskEventType, TERMINAL_EVENTS } from '@ask/ask-contracts';
import { AskError, AskErrorCode, invalidRequest, isAskError, llmUpstream } from '@ask/ask-errors';
import { type AskEventStream, type AskMeta, metaOf } from './ask-event-stream';
import { publishErrorUnlessEnded } from './deadline-publish';
import type { HubSubscription, StreamEntry, StreamHub } from './stream-hub';
import { compareStreamIds, isValidStreamId } from './stream-ids';

/**
 * Where a relay starts: after this id (`0` = the first event), whether the stream has already ended
 * there, and the first page of the events after it (read with the check, one round trip).
 */
export interface ResumePoint {
  after: string;
  /** The event at `after` is the terminal one: nothing follows, forever. */
  ended: boolean;
  /** Up to one page of the entries after `after`, oldest first (may be empty). */
  backlog?: StreamEntry[];
}

/** Options of {@link AskEventRelay.relay}. */
export interface RelayOptions {
  /** Stops the relay (the client went away, or the gateway shuts down). */
  signal: AbortSignal;
  /** Epoch milliseconds after which the relay ends the ask with a typed 504 if it has not ended. */
  deadlineAt?: number;
  /** Ends the relay (no terminal event) after this long without an event, in milliseconds; default 300,000. */
  idleTimeoutMs?: number;
  /**
   * Receives the events in stream order, each batch right after the previous one (no gap, no repeat).
   * `phase` says where a batch comes from: `catch-up` for a page of stored events (the replay or
   * resume before the relay follows the stream; a returned promise holds back the next page until it
   * settles: back-pressure), `live` for new events, handed over as they arrive, so the writer bounds
   * its own buffer.
   */
  write(events: AskEvent[], phase: 'catch-up' | 'live'): void | Promise<void>;
  /**
   * Bytes a catch-up page should hold (ASK_STREAM_BUFFER_BYTES for the SSE route): after each page
   * the next one's `COUNT` is this over the largest entry seen so far (entry bytes: its field
   * strings' UTF-16 length), between 1 and 500. Absent: pages of 500 entries.
   */
  pageBytes?: number;
}

/**
 * How a relay ended: after the terminal event; after `idleTimeoutMs` without an event; stopped by
 * the signal; or failed (`cause`: Redis went away, or the stream vanished at the deadline).
 */
export type RelayEnd = { reason: 'terminal' | 'idle' | 'aborted' } | { reason: 'failed'; cause: unknown };

/** Entries read per catch-up page. */
const PAGE = 500;

/**
 * The read side of the ask event streams for the SSE route: validates `Last-Event-ID` against the
 * stream, replays the events after it with plain `XRANGE`s on the shared command connection, then
 * follows new ones through the process's {@link StreamHub} (a few shared blocking connections, not
 * one per client). At the ask's deadline it ends the stream with a 504 `error` through
 * {@link publishErrorUnlessEnded}: never after a terminal event, never twice.
 */
export class AskEventRelay {
  constructor(
    private readonly redis: RedisClient,
    private readonly hub: StreamHub,
    private readonly events: AskEventStream,
    private readonly ttlSeconds: number,
  ) {}

  /**
   * Checks a client's `Last-Event-ID` against the ask's stream. Absent or empty: from the start. An
   * id earlier than a rebuilt stream (one whose first entry is `reset`: the reconciler re-opened an ask
   * Redis had lost), or any id on a stream still empty, also resumes from the start.
   * @throws AskError 400 `invalid_request` naming `Last-Event-ID` when it is not a stream id, is later
   *   than the stream's last event, or is not the id of one of its events.
   */
  async resumePoint(askId: string, lastEventId: string | undefined): Promise<ResumePoint> {
    const key = this.events.streamKey(askId);
    const [from, count] = firstRead(lastEventId);
    return this.pointAfter(key, lastEventId, await this.redis.xrange(key, from, '+', 'COUNT', count));
  }

  /**
   * The ask's meta ({@link AskEventStream.meta}) and its resume point ({@link resumePoint}) read in
   * one round trip (a pipeline of the `HGETALL` and the first `XRANGE`), for the events route, which
   * needs both (one Redis round trip per events request instead of two). The resume point
   * is checked only when asked for, after the caller has checked the meta: a caller who may not see
   * the ask is refused without learning anything of its stream.
   * @throws AskError 400 `invalid_request` for a `Last-Event-ID` that is not a stream id; Redis errors.
   *   `resumePoint()` rejects as {@link resumePoint} does.
   */
  async metaAndResumePoint(
    askId: string,
    lastEventId: string | undefined,
  ): Promise<{ meta: AskMeta | null; resumePoint: () => Promise<ResumePoint> }> {
    const key = this.events.streamKey(askId);
    const [from, count] = firstRead(lastEventId);
    const replies = await this.redis
      .pipeline()
      .hgetall(this.events.metaKey(askId))
      .xrange(key, from, '+', 'COUNT', count)
      .exec();
    const [[metaErr, raw], [rangeErr, entries]] = replies ?? [
      [new Error('no reply'), null],
      [null, null],
    ];
    if (metaErr) throw metaErr;
    return {
      meta: metaOf(raw as Record<string, string>),
      resumePoint: () =>
        rangeErr ? Promise.reject(rangeErr) : this.pointAfter(key, lastEventId, entries as StreamEntry[]),
    };
  }

  /** The resume point from the first `XRANGE` of {@link firstRead} (`entries`); more reads only for a rebuilt stream. */
  private async pointAfter(key: string, lastEventId: string | undefined, entries: StreamEntry[]): Promise<ResumePoint> {
    if (lastEventId === undefined || lastEventId === '') return { after: '0', ended: false, backlog: entries };
    const [entry, ...backlog] = entries;
    if (!entry || entry[0] !== lastEventId) {
      // The stream was rebuilt after Redis lost it (the reconciler re-opened the ask and its first
      // entry is `reset`), or is empty while it is being rebuilt: an id of the lost stream, earlier
      // than everything here, resumes from the start; the `reset` tells the client to drop its text.
      const [first] = await this.redis.xrange(key, '-', '+', 'COUNT', 1);
      if (!first || (fieldOf(first[1], 'type') === 'reset' && compareStreamIds(lastEventId, first[0]) < 0)) {
        return { after: '0', ended: false, backlog: await this.redis.xrange(key, '-', '+', 'COUNT', PAGE) };
      }
      throw invalidRequest(
        entry
          ? 'Last-Event-ID: not the id of an event of this stream'
          : 'Last-Event-ID: later than the last event of this stream',
      );
    }
    return { after: lastEventId, ended: isTerminal(entry), backlog };
  }

  /**
   * Relays the ask's events after `start` to `options.write` until the terminal event, the signal,
   * the idle timeout, or a failure; resolves how it ended (never rejects).
   */
  async relay(askId: string, start: ResumePoint, options: RelayOptions): Promise<RelayEnd> {
    if (start.ended) return { reason: 'terminal' };
    const key = this.events.streamKey(askId);
    const { signal, deadlineAt, idleTimeoutMs = 300_000 } = options;
    let cursor = start.after;
    let finished = false;
    let subscription: HubSubscription | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    let deadlineTimer: NodeJS.Timeout | undefined;
    let resolveEnd!: (end: RelayEnd) => void;
    const ended = new Promise<RelayEnd>((resolve) => (resolveEnd = resolve));

    const finish = (end: RelayEnd) => {
      if (finished) return;
      finished = true;
      subscription?.close();
      clearTimeout(idleTimer);
      clearTimeout(deadlineTimer);
      signal.removeEventListener('abort', onAbort);
      resolveEnd(end);
    };
    const onAbort = () => finish({ reason: 'aborted' });
    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => finish({ reason: 'idle' }), idleTimeoutMs);
    };
    /** Hands entries after the cursor to the writer; stops at the terminal event. */
    const deliver = (entries: StreamEntry[], phase: 'catch-up' | 'live'): void | Promise<void> => {
      if (finished) return;
      const batch: AskEvent[] = [];
      let terminal = false;
      for (const entry of entries) {
        if (compareStreamIds(entry[0], cursor) <= 0) continue;
        cursor = entry[0];
        const event = toEvent(entry);
        batch.push(event);
        if (TERMINAL_EVENTS.has(event.type)) {
          terminal = true;
          break;
        }
      }
      if (batch.length === 0) return;
      armIdle();
      let written: void | Promise<void>;
      try {
        written = options.write(batch, phase);
      } catch (err) {
        finish({ reason: 'failed', cause: err });
        return;
      }
      if (terminal) finish({ reason: 'terminal' });
      return written;
    };
    const onDeadline = () => {
      const timeout = llmUpstream('the ask passed its deadline without an answer', { timeout: true });
      publishErrorUnlessEnded(this.redis, key, timeout.toEvent(), this.ttlSeconds).then(
        // Appended, or the terminal event was already there: either way it reaches the client through
        // the normal read, with its stream id. A stream that vanished has nothing to resume.
        (result) => result.outcome === 'missing' && finish({ reason: 'failed', cause: timeout }),
        (err) => finish({ reason: 'failed', cause: streamUnavailable(err) }),
      );
    };

    if (signal.aborted) return { reason: 'aborted' };
    signal.addEventListener('abort', onAbort, { once: true });
    armIdle();
    try {
      // Catch up with plain reads, one page at a time, waiting for the writer between pages; pages
      // shrink to about `pageBytes` when entries are large (a long answer's big deltas).
      let count = PAGE;
      let largest = 0;
      for (let first = start.backlog; ; first = undefined) {
        const asked = first ? PAGE : count;
        const page = first ?? (await this.redis.xrange(key, cursor === '0' ? '-' : `(${cursor}`, '+', 'COUNT', asked));
        if (finished) break;
        await deliver(page, 'catch-up');
        if (finished || page.length < asked) break;
        if (options.pageBytes !== undefined) {
          for (const entry of page) largest = Math.max(largest, entryLength(entry));
          count = Math.max(1, Math.min(PAGE, Math.floor(options.pageBytes / Math.max(1, largest))));
        }
      }
      if (!finished) {
        subscription = this.hub.subscribe(key, cursor, {
          onEntries: (entries) => {
            try {
              void Promise.resolve(deliver(entries, 'live')).catch((err) => finish({ reason: 'failed', cause: err }));
            } catch (err) {
              finish({ reason: 'failed', cause: err });
            }
          },
          onError: (err) => finish({ reason: 'failed', cause: streamUnavailable(err) }),
        });
        if (deadlineAt !== undefined && Number.isFinite(deadlineAt)) {
          deadlineTimer = setTimeout(onDeadline, Math.max(0, deadlineAt - Date.now()));
        }
      }
    } catch (err) {
      finish({ reason: 'failed', cause: isAskError(err) ? err : streamUnavailable(err) });
    }
    return ended;
  }
}

/**
 * 503 (code `internal_error`, the gateway's "service unavailable" for a store that is down): Redis
 * failed under a relay. Not the ask's end: the client resumes with its Last-Event-ID.
 */
export function streamUnavailable(cause: unknown): AskError {
  return new AskError(AskErrorCode.InternalError, {
    status: 503,
    error: 'service unavailable',
    details: 'the event stream is unreachable; reconnect with Last-Event-ID',
    cause,
  });
}

/**
 * The first `XRANGE` of a resume: from the start (a page) without `Last-Event-ID`, else from the id
 * itself (a page and the entry at the id, which must be there).
 * @throws AskError 400 `invalid_request` naming `Last-Event-ID` when it is not a stream id.
 */
function firstRead(lastEventId: string | undefined): [from: string, count: number] {
  if (lastEventId === undefined || lastEventId === '') return ['-', PAGE];
  if (!isValidStreamId(lastEventId)) {
    throw invalidRequest('Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent');
  }
  return [lastEventId, PAGE + 1];
}

/** An entry's size as its field strings' total length (UTF-16 units; close to bytes for JSON text). */
function entryLength([, fields]: StreamEntry): number {
  let length = 0;
  for (const field of fields) length += field.length;
  return length;
}

function isTerminal(entry: StreamEntry): boolean {
  return TERMINAL_EVENTS.has(fieldOf(entry[1], 'type') as AskEventType);
}

function fieldOf(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function toEvent([id, fields]: StreamEntry): AskEvent {
  return { id, type: fieldOf(fields, 'type') as AskEventType, data: JSON.parse(fieldOf(fields, 'data') ?? '{}') };
}
