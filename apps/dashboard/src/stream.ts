import type { AskEventMap, AskEventType } from '@ask/ask-contracts';

const SERVICE_EVENTS: readonly AskEventType[] = ['accepted', 'retrieved', 'budget', 'delta', 'reset', 'done', 'error'];

export interface StreamHandlers {
  /** One event of the ask, with its stream id. */
  onEvent<T extends AskEventType>(id: string, type: T, data: AskEventMap[T]): void;
  /** The browser gave up reconnecting (the stream answered non-2xx, e.g. expired or unauthorized). */
  onLost(): void;
}

/**
 * Follows an ask's events with the browser's EventSource, opened on `eventsUrl` exactly as the API
 * returned it (it may carry a `?token=` capability; EventSource cannot send an Authorization header).
 * A dropped connection is left to EventSource, which reconnects by itself and sends `Last-Event-ID`,
 * so the stream resumes after the last event received. Closed after `done` or `error`, so the browser
 * does not reconnect to a finished stream.
 * @returns a function that closes the stream.
 */
export function followAsk(eventsUrl: string, handlers: StreamHandlers): () => void {
  const source = new EventSource(eventsUrl);
  let finished = false;
  const close = () => {
    finished = true;
    source.close();
  };
  for (const type of SERVICE_EVENTS) {
    source.addEventListener(type, (event: Event) => {
      // The service's `error` event carries JSON data; EventSource's own `error` (connection) has none.
      if (!(event instanceof MessageEvent) || typeof event.data !== 'string' || event.data === '') {
        if (type === 'error' && source.readyState === EventSource.CLOSED && !finished) {
          finished = true;
          handlers.onLost();
        }
        return;
      }
      let data: AskEventMap[typeof type];
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      // A 503 `error` has no id: the gateway lost Redis mid-relay and ended the response; EventSource
      // reconnects by itself with Last-Event-ID, so it is not the ask's end.
      if (type === 'error' && (data as AskEventMap['error']).status === 503) return;
      if (type === 'done' || type === 'error') close();
      handlers.onEvent(event.lastEventId, type, data);
    });
  }
  return close;
}
