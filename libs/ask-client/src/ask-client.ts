import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type {
  AskEvent,
  AskEventType,
  BudgetEvent,
  DoneEvent,
  ErrorEvent,
  IngestionAccepted,
  IngestionDoneEvent,
  IngestionEvent,
  IngestionEventType,
  IngestionView,
} from '@ask/ask-contracts';

/** A non-2xx answer of the API, with its typed body `{ error, code, details? }`. */
export class AskApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: string; code?: string; details?: string },
  ) {
    super(`${status} ${body.code ?? 'error'}: ${body.error ?? ''}${body.details ? ` (${body.details})` : ''}`);
    this.name = 'AskApiError';
  }
}

/**
 * The relay ended the stream with an `error` event that has no id (status 503: the gateway lost
 * Redis). Not the ask's end: reconnect with the last event id received.
 */
export class AskStreamInterrupted extends Error {
  constructor(readonly event: ErrorEvent) {
    super(`${event.status} ${event.code}: ${event.error}${event.details ? ` (${event.details})` : ''}`);
    this.name = 'AskStreamInterrupted';
  }
}

/** Options of {@link AskClient.events}. */
export interface EventsOptions {
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string;
  /**
   * The `eventsUrl` of the ask's 202 answer (`/api/v1/asks/{askId}/events?token=…`): its capability
   * token authorises the stream even without an API key. Without it the client reads
   * `/api/v1/asks/{askId}/events` with its Bearer key only.
   */
  eventsUrl?: string;
  signal?: AbortSignal;
}

/** The outcome of one ask as a client reassembles it from the events. */
export interface AskOutcome {
  askId: string;
  sessionId: string;
  /** The answer text: deltas after the last `reset`, concatenated. */
  answer: string;
  budget?: BudgetEvent;
  done?: DoneEvent;
  error?: ErrorEvent;
  /** Every event in the order received. */
  events: AskEvent[];
}

/**
 * A small typed HTTP + SSE client of the Ask API (used by the CLI, the end-to-end tests and the
 * benchmarks). Server-sent events are parsed with `eventsource-parser`.
 */
export class AskClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
  ) {}

  /** Any JSON request; resolves the parsed body, rejects with {@link AskApiError} on a non-2xx status. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (!response.ok) throw new AskApiError(response.status, parsed ?? {});
    return parsed as T;
  }

  /** `POST /api/v1/projects/:projectId/ask`. */
  ask(projectId: string, question: string, sessionId?: string) {
    return this.request<{ askId: string; sessionId: string; eventsUrl: string }>(
      'POST',
      `/api/v1/projects/${projectId}/ask`,
      sessionId ? { question, sessionId } : { question },
    );
  }

  /**
   * The ask's events as they arrive (SSE), until the server ends the stream. An `error` event without
   * an id is not one of the ask's events: it throws {@link AskStreamInterrupted}. Follows
   * `options.eventsUrl` (with its token) when given, and always sends the Bearer key when the client has one.
   */
  async *events(askId: string, options: EventsOptions = {}): AsyncGenerator<AskEvent> {
    const headers = this.headers({ accept: 'text/event-stream' });
    if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
    const url = new URL(options.eventsUrl ?? `/api/v1/asks/${encodeURIComponent(askId)}/events`, this.baseUrl);
    const response = await fetch(url, { headers, signal: options.signal });
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      throw new AskApiError(response.status, text ? JSON.parse(text) : {});
    }
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => queue.push(event) });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (queue.length) {
        const message = queue.shift()!;
        if (message.event === 'error' && !message.id) throw new AskStreamInterrupted(JSON.parse(message.data));
        yield {
          id: message.id ?? '',
          type: (message.event ?? 'message') as AskEventType,
          data: JSON.parse(message.data),
        };
      }
    }
  }

  /**
   * Asks and follows the events to the end, reconnecting with `Last-Event-ID` if the stream drops
   * before a terminal event (at most `maxReconnects` times).
   */
  async askAndWait(
    projectId: string,
    question: string,
    options: { sessionId?: string; onEvent?: (event: AskEvent) => void; maxReconnects?: number } = {},
  ): Promise<AskOutcome> {
    const accepted = await this.ask(projectId, question, options.sessionId);
    const outcome: AskOutcome = { askId: accepted.askId, sessionId: accepted.sessionId, answer: '', events: [] };
    const ended = await followToEnd(
      (lastEventId) => this.events(accepted.askId, { lastEventId, eventsUrl: accepted.eventsUrl }),
      (event) => {
        outcome.events.push(event);
        applyEvent(outcome, event);
        options.onEvent?.(event);
        return Boolean(outcome.done || outcome.error);
      },
      options.maxReconnects,
    );
    if (ended) return outcome;
    throw new Error(`ask ${accepted.askId}: the event stream ended without done or error`);
  }

  /** `POST /api/v1/projects/:projectId/knowledge` → 202 (at most 200 documents per call). */
  ingestKnowledge(
    projectId: string,
    documents: ReadonlyArray<{ uri: string; title?: string; text: string }>,
  ): Promise<IngestionAccepted> {
    return this.request<IngestionAccepted>('POST', `/api/v1/projects/${projectId}/knowledge`, { documents });
  }

  /** `POST /api/v1/projects/:projectId/insights` → 202. */
  ingestInsights(
    projectId: string,
    body: {
      insights?: ReadonlyArray<{ id: string; name: string; description: string }>;
      recommendations?: ReadonlyArray<{ id: string; title: string; body: string }>;
    },
  ): Promise<IngestionAccepted> {
    return this.request<IngestionAccepted>('POST', `/api/v1/projects/${projectId}/insights`, body);
  }

  /** `POST /api/v1/projects/:projectId/reembed` → 202. */
  reembed(projectId: string): Promise<IngestionAccepted> {
    return this.request<IngestionAccepted>('POST', `/api/v1/projects/${projectId}/reembed`);
  }

  /** `GET /api/v1/projects/:projectId/ingestions/:ingestionId`. */
  ingestion(projectId: string, ingestionId: string): Promise<IngestionView> {
    return this.request<IngestionView>('GET', `/api/v1/projects/${projectId}/ingestions/${ingestionId}`);
  }

  /** An ingestion's events as they arrive (SSE), until the server ends the stream. */
  async *ingestionEvents(
    projectId: string,
    ingestionId: string,
    options: { lastEventId?: string; signal?: AbortSignal } = {},
  ): AsyncGenerator<IngestionEvent> {
    const path = `/api/v1/projects/${encodeURIComponent(projectId)}/ingestions/${encodeURIComponent(ingestionId)}/events`;
    for await (const message of this.sse(path, options.lastEventId, options.signal)) {
      yield {
        id: message.id ?? '',
        type: (message.event ?? 'message') as IngestionEventType,
        data: JSON.parse(message.data),
      };
    }
  }

  /**
   * Follows an ingestion's events to `done` or `error`, reconnecting with `Last-Event-ID` if the
   * stream drops first (at most `maxReconnects` times).
   * @returns every event received and the terminal one.
   */
  async followIngestion(
    projectId: string,
    ingestionId: string,
    options: { onEvent?: (event: IngestionEvent) => void; maxReconnects?: number } = {},
  ): Promise<{ events: IngestionEvent[]; done?: IngestionDoneEvent; error?: ErrorEvent }> {
    const result: { events: IngestionEvent[]; done?: IngestionDoneEvent; error?: ErrorEvent } = { events: [] };
    const ended = await followToEnd(
      (lastEventId) => this.ingestionEvents(projectId, ingestionId, { lastEventId }),
      (event) => {
        result.events.push(event);
        options.onEvent?.(event);
        if (event.type === 'done') result.done = event.data as IngestionDoneEvent;
        if (event.type === 'error') result.error = event.data as ErrorEvent;
        return Boolean(result.done || result.error);
      },
      options.maxReconnects,
    );
    if (ended) return result;
    throw new Error(`ingestion ${ingestionId}: the event stream ended without done or error`);
  }

  /** The raw SSE messages of `path`, parsed with eventsource-parser. */
  private async *sse(
    path: string,
    lastEventId: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<EventSourceMessage> {
    const headers = this.headers({ accept: 'text/event-stream' });
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const response = await fetch(new URL(path, this.baseUrl), { headers, signal });
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      throw new AskApiError(response.status, text ? JSON.parse(text) : {});
    }
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => queue.push(event) });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (queue.length) yield queue.shift()!;
    }
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.apiKey ? { ...extra, authorization: `Bearer ${this.apiKey}` } : { ...extra };
  }
}

/** Folds one event into an outcome: deltas append, `reset` clears the answer, terminal events are kept. */
export function applyEvent(outcome: AskOutcome, event: AskEvent): void {
  switch (event.type) {
    case 'delta':
      outcome.answer += (event.data as { text: string }).text;
      break;
    case 'reset':
      outcome.answer = '';
      break;
    case 'budget':
      outcome.budget = event.data as BudgetEvent;
      break;
    case 'done':
      outcome.done = event.data as DoneEvent;
      break;
    case 'error':
      outcome.error = event.data as ErrorEvent;
      break;
    default:
      break;
  }
}

/**
 * Reads the stream `open(lastEventId)` gives, and opens it again after the last event's id
 * (`Last-Event-ID`) when it ends or drops before `take` calls an event terminal, at most
 * `maxReconnects` times. A refused open (AskApiError: 404, 429…) is thrown as is; any other failure
 * (a dropped connection, an `error` without an id) is one more reconnect.
 * @returns true when a terminal event arrived; false when the stream ended for good without one.
 */
async function followToEnd<E extends { id: string }>(
  open: (lastEventId: string | undefined) => AsyncIterable<E>,
  take: (event: E) => boolean,
  maxReconnects = 5,
): Promise<boolean> {
  let lastEventId: string | undefined;
  for (let attempt = 0; attempt <= maxReconnects; attempt += 1) {
    try {
      for await (const event of open(lastEventId)) {
        lastEventId = event.id;
        if (take(event)) return true;
      }
    } catch (err) {
      if (err instanceof AskApiError) throw err;
    }
  }
  return false;
}
