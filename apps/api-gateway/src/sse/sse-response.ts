import type { Request, Response } from 'express';

/** One server-sent event; without `id` it is not part of the ask's stream (a client keeps its Last-Event-ID). */
export interface SseEvent {
  id?: string;
  type: string;
  data: unknown;
}

/**
 * An SSE response written directly (not through Nest's `@Sse`, whose error path writes an untyped
 * `event: error / id: 1 / data: Internal server error`). Frames are what Nest wrote: `event:`, `id:`,
 * one `data:` line of JSON (JSON has no raw line breaks), a blank line. Holds at most
 * `maxBufferedBytes` unread by the client: past that, {@link send} drops the client (the socket is
 * destroyed: an incomplete frame is discarded by the client's parser, which resumes after the last
 * whole event with Last-Event-ID). Stored events (catch-up pages) go through {@link sendPaced}
 * instead, which waits for the client rather than dropping it.
 */
export class SseResponse {
  private dropped = false;
  /** The one pending wait for 'drain' (shared by every caller: one listener pair at most). */
  private drainWait: Promise<void> | undefined;

  constructor(
    private readonly request: Request,
    private readonly response: Response,
    private readonly maxBufferedBytes: number,
  ) {}

  /** True once the client is gone, the response ended, or the client was dropped. */
  get closed(): boolean {
    return this.dropped || this.response.destroyed || this.response.writableEnded;
  }

  /** True when the client was dropped for reading too slowly. */
  get droppedSlowClient(): boolean {
    return this.dropped;
  }

  /** Sends the status and headers (Nest's SSE headers) and keeps the socket open without a timeout. */
  open(): void {
    const socket = this.request.socket;
    socket.setKeepAlive(true);
    socket.setNoDelay(true);
    socket.setTimeout(0);
    this.response.writeHead(200, {
      'Content-Type': 'text/event-stream',
      Connection: 'keep-alive',
      'Cache-Control': 'private, no-cache, no-store, must-revalidate, max-age=0, no-transform',
      Pragma: 'no-cache',
      Expire: '0',
      'X-Accel-Buffering': 'no',
    });
    // The headers leave with this first write (and the first events written in the same tick).
    this.response.write('\n');
  }

  /**
   * Writes one event. Returns false when the client is gone or was just dropped because more than
   * `maxBufferedBytes` waited unread.
   */
  send(event: SseEvent): boolean {
    return this.sendAll([event]);
  }

  /**
   * Writes `events` in order, as one write to the response: the frames are exactly those of one
   * {@link send} per event (same bytes, same ids), in one chunk of the response instead of one per
   * event (a socket write and its chunk framing each, which dominated a long answer's CPU). Returns false when the client is
   * gone or was just dropped because more than `maxBufferedBytes` waited unread; nothing is written
   * to a closed response.
   */
  sendAll(events: readonly SseEvent[]): boolean {
    if (this.closed) return false;
    if (events.length === 0) return true;
    let frames = '';
    for (const event of events) frames += frame(event);
    this.response.write(frames);
    if (this.response.writableLength > this.maxBufferedBytes) {
      this.dropped = true;
      this.response.destroy();
      return false;
    }
    return true;
  }

  /**
   * Writes a catch-up page (events already stored: a replay from the start or a resume) with
   * back-pressure instead of the drop rule of {@link sendAll}: whole frames in writes of at most
   * `maxBufferedBytes` (a frame larger than that is written alone), each write after the client has
   * read the one before ('drain'). So the bytes left unread never exceed the larger of
   * `maxBufferedBytes` and one frame, whatever the page's size, and a reader far behind is paced,
   * not reset. Resolves, with the response drained, true once every frame is written; false when the
   * client is gone (or `signal` fired) first: nothing more is written.
   */
  async sendPaced(events: readonly SseEvent[], signal?: AbortSignal): Promise<boolean> {
    let batch = '';
    let bytes = 0;
    for (const event of events) {
      const next = frame(event);
      const size = Buffer.byteLength(next, 'utf8');
      if (batch !== '' && bytes + size > this.maxBufferedBytes) {
        if (!(await this.writePaced(batch, signal))) return false;
        batch = '';
        bytes = 0;
      }
      batch += next;
      bytes += size;
    }
    return batch === '' ? !this.closed : this.writePaced(batch, signal);
  }

  /** One write of {@link sendPaced}, then the wait for 'drain' when the socket did not take it at once. */
  private async writePaced(chunk: string, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || signal?.aborted) return false;
    if (!this.response.write(chunk)) await this.drainedOrAborted(signal);
    return !this.closed && !signal?.aborted;
  }

  /** {@link drained}, or sooner when `signal` fires (the gateway shuts down under a stalled reader). */
  private async drainedOrAborted(signal?: AbortSignal): Promise<void> {
    const wait = this.drained();
    if (!wait || !signal) return wait;
    let onAbort!: () => void;
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([wait, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Resolves once the client has read what was written (or is gone). Every caller shares one pending
   * wait: at most one 'drain' and one 'close' listener, both removed as soon as either fires, however
   * many writes wait (no listener leak for a slow reader of many live batches).
   */
  drained(): Promise<void> | void {
    if (this.closed || !this.response.writableNeedDrain) return;
    this.drainWait ??= new Promise((resolve) => {
      const done = () => {
        this.response.off('drain', done);
        this.response.off('close', done);
        this.drainWait = undefined;
        resolve();
      };
      this.response.on('drain', done);
      this.response.on('close', done);
    });
    return this.drainWait;
  }

  /** Ends the response (the client's EventSource reconnects unless it saw the terminal event). */
  end(): void {
    if (!this.response.writableEnded && !this.response.destroyed) this.response.end();
  }
}

/** One event's frame: `event:`, `id:` (when it has one), one `data:` line of JSON, a blank line. */
function frame(event: SseEvent): string {
  const id = event.id === undefined ? '' : `id: ${event.id.replace(/[\r\n]/g, '')}\n`;
  return `event: ${event.type.replace(/[\r\n]/g, '')}\n${id}data: ${JSON.stringify(event.data)}\n\n`;
}
