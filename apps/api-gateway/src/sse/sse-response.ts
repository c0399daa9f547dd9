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
 * whole event with Last-Event-ID).
 */
export class SseResponse {
  private dropped = false;

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

  /** Resolves once the client has read what was written (or is gone). */
  drained(): Promise<void> | void {
    if (this.closed || !this.response.writableNeedDrain) return;
    return new Promise((resolve) => {
      const done = () => {
        this.response.off('drain', done);
        this.response.off('close', done);
        resolve();
      };
      this.response.once('drain', done);
      this.response.once('close', done);
    });
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
