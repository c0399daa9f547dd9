import type { TokenCounter } from '@ask/token-counting';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/** A request over HTTP/1.1 or HTTP/2 (the AWS SDK speaks h2c to Bedrock Runtime). */
export type FakeRequest = IncomingMessage | Http2ServerRequest;
/** The response side of `FakeRequest`. */
export type FakeResponse = ServerResponse | Http2ServerResponse;

/**
 * Faults the fake injects:
 * - `429`: the provider's rate-limit error with `retry-after` (and `retry-after-ms` where the provider sends it);
 * - `500`: the provider's internal-error body;
 * - `stall`: no bytes at all until the client gives up;
 * - `disconnect`: the stream starts, then the socket is destroyed after `afterChunks` writes;
 * - `truncate`: the stream ends cleanly but without its final event(s);
 * - `unterminated-final`: the stream ends right after the event that completes the answer (the part
 *   marked `completes`: OpenAI's `finish_reason` chunk, Anthropic's `message_stop`, Gemini's
 *   `finishReason` chunk), with that event's trailing newlines cut: its last bytes are the event's
 *   own, with no blank line after them;
 * - `silent-truncation`: Ollama only, a normal answer reporting `prompt_eval_count` far below the prompt;
 * - `content-filter`: the provider's content-filter 400, with `message` when given;
 * - `overflow`: the provider's context-overflow 400 disclosing `promptTokens` and `window` (routes
 *   whose persona has an `overflow` answer: Anthropic, Google);
 * - `redirect`: a `307 Temporary Redirect` to `location` (an allowed host that sends its client
 *   elsewhere, e.g. to an internal address: the SSRF suite checks the client refuses to follow).
 *
 * A fault with `endpoint: 'count'` is taken by the next request to a count endpoint (Anthropic
 * `count_tokens`, Vertex `:countTokens`) instead of the next generation or embedding request.
 */
export type FaultKind =
  | '429'
  | '500'
  | 'stall'
  | 'disconnect'
  | 'truncate'
  | 'unterminated-final'
  | 'silent-truncation'
  | 'content-filter'
  | 'overflow'
  | 'redirect';

/** One injected fault and its parameters. */
export interface FakeFault {
  kind: FaultKind;
  /** `429`: seconds in `retry-after`; default 1. */
  retryAfterSeconds?: number;
  /** `content-filter`: the provider message to send (tests plant fake keys here). */
  message?: string;
  /** `disconnect`: stream writes before the socket is destroyed; default 2. */
  afterChunks?: number;
  /** `overflow`: the figures the answer discloses (tokens); default 210000 > 200000. */
  promptTokens?: number;
  window?: number;
  /** `redirect`: the `Location` to send (absolute URL). */
  location?: string;
  /** `count`: the fault is for the next count-endpoint request; default: generation and embedding. */
  endpoint?: 'count';
}

/** One request as received. Secret-bearing headers are `[redacted]`; `auth` names the scheme only. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  route: string;
  auth: 'bearer' | 'x-api-key' | 'api-key' | 'aws-sigv4' | null;
  headers: Record<string, string>;
  body: unknown;
  fault?: FaultKind;
  /** Prompt tokens the fake counted, when the route counts them. */
  promptTokens?: number;
}

/**
 * One write of a streamed answer; `final` marks the provider's closing event(s), dropped by
 * `truncate`; `completes` marks the event that completes the answer, the last one `unterminated-final` sends.
 */
export interface StreamPart {
  data: string | Uint8Array;
  final?: boolean;
  completes?: boolean;
}

/**
 * How OpenAI-wire chat routes count and enforce (the drift checks): a real tokenizer other
 * than the model's own, counts multiplied by `promptScale` (a tokenizer denser than any we know), and
 * windows per model id instead of the catalog's. Unset: the model's own counter and catalog window.
 */
export interface EnforceOptions {
  /** Counts every prompt (text + its framing) with this counter. */
  counter?: TokenCounter;
  /** Multiplies the counted prompt tokens (rounded up); default 1. */
  promptScale?: number;
  /** Window per model id, in tokens; models not listed keep the catalog's. */
  windows?: Readonly<Record<string, number>>;
}

/** What a route handler gets. */
export interface RouteContext {
  /** The fake's counting and window overrides (OpenAI-wire chat routes). */
  enforce: EnforceOptions;
  /** The answer's chunks when the fake was started with its own (OpenAI-wire chat routes); else `FAKE_ANSWER_CHUNKS`. */
  answerChunks?: readonly string[];
  req: FakeRequest;
  res: FakeResponse;
  url: URL;
  /** The route pattern's capture groups, URI-decoded. */
  params: string[];
  body: Record<string, unknown>;
  fault?: FakeFault;
  record: RecordedRequest;
  /** Sends a JSON answer. */
  json(status: number, payload: unknown, headers?: Record<string, string>): void;
  /** Streams `parts` with a short pause between writes, applying `disconnect` and `truncate` faults. */
  stream(contentType: string, parts: StreamPart[], afterChunks?: number): Promise<void>;
}

/** A provider's error answers for the faults every route supports. */
export interface ErrorPersona {
  rateLimited(ctx: RouteContext, retryAfterSeconds: number): void;
  serverError(ctx: RouteContext): void;
  contentFilter(ctx: RouteContext, message?: string): void;
  /** The provider's context-overflow answer disclosing these figures (tokens). */
  overflow?(ctx: RouteContext, promptTokens: number, window: number): void;
}

/** One endpoint of one provider. */
export interface Route {
  name: string;
  method: 'POST' | 'GET';
  /** Tested against the URL path (no query); capture groups become `params`. */
  pattern: RegExp;
  /**
   * False for count endpoints: they take only faults set with `endpoint: 'count'`, so a fault set for
   * "the next request" hits the generation.
   */
  faultable: boolean;
  auth?: { accepts(scheme: RecordedRequest['auth']): boolean; reject(ctx: RouteContext): void };
  errors: ErrorPersona;
  handle(ctx: RouteContext): void | Promise<void>;
}
