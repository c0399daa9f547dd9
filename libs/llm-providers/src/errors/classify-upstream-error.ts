import Anthropic from '@anthropic-ai/sdk';
import { sanitizeProviderMessage } from '@ask/ask-errors';
import OpenAI from 'openai';
import type { ProviderId } from '@ask/model-catalog';
import type { EmbeddingProviderId } from '../types';
import { findEgressRefusal } from '../egress/egress-policy';
import { parseRetryAfter } from './retry-after';
import {
  EmbeddingShapeError,
  type HeaderBag,
  UpstreamFailureError,
  type UpstreamFailure,
  UpstreamHttpError,
  UpstreamStreamError,
} from './upstream-errors';

/**
 * What can be read off a thrown provider error, whatever threw it (openai / Anthropic SDK `APIError`,
 * AWS SDK `ServiceException`, our `UpstreamHttpError` / `UpstreamStreamError`, a DOM `AbortError`).
 */
export interface UpstreamErrorFacts {
  /** HTTP status, or the status the error's type implies (`overloaded_error` → 529, `RESOURCE_EXHAUSTED` → 429). */
  status?: number;
  /** Provider error code or type: OpenAI `code`/`type`, Anthropic `error.type`, AWS exception name, Gemini `status`. */
  codes: string[];
  /** The provider's message (raw, unsanitised: never put it anywhere before `sanitizeProviderMessage`). */
  message: string;
  headers?: HeaderBag;
  /** Structured counts some servers send beside the message (llama.cpp `n_ctx`, `n_prompt_tokens`). */
  limit?: number;
  actual?: number;
  /** The caller's signal fired, or the SDK reports a client-side timeout. */
  aborted: boolean;
  /** The connection dropped or the stream ended early: the request may be sent again. */
  transport: boolean;
  /** Our own stream check found a content-filter stop. */
  contentFilter: boolean;
}

/** One row of the overflow table: the provider form it recognises and how to read its numbers. */
interface OverflowForm {
  /** Which provider emits it, and where the form is documented or observed. */
  source: string;
  /** Matches the message; capture groups are read by `read`. */
  pattern: RegExp;
  read?: (m: RegExpMatchArray) => OverflowFigures;
}

/**
 * The figures an overflow disclosed, in tokens. `limit` is the window; `actual` what the provider
 * measured against it (for some forms the prompt plus `max_tokens`); `promptTokens` the prompt alone,
 * when the wording separates it.
 */
export interface OverflowFigures {
  limit?: number;
  actual?: number;
  promptTokens?: number;
}

const n = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s.replace(/,/g, '')));

/**
 * Context-overflow forms, one row per provider wording. Order matters only where two rows could match
 * the same text: rows that read numbers come before bare wordings.
 */
export const OVERFLOW_FORMS: readonly OverflowForm[] = [
  {
    source:
      'Azure OpenAI / OpenAI GPT-5: "Input tokens exceed the configured limit of N tokens. Your messages resulted in M tokens."',
    pattern:
      /input tokens exceed the configured limit of ([\d,]+) tokens(?:\.\s*your messages resulted in ([\d,]+) tokens)?/i,
    read: (m) => ({ limit: n(m[1]), actual: n(m[2]), promptTokens: n(m[2]) }),
  },
  {
    source:
      'vLLM: "This model\'s maximum context length is N tokens. However, you requested M tokens (P in the messages, C in the completion)"',
    pattern:
      /maximum context length is ([\d,]+) tokens\.?\s*however,? you requested ([\d,]+) tokens \(([\d,]+) in the messages/i,
    read: (m) => ({ limit: n(m[1]), actual: n(m[2]), promptTokens: n(m[3]) }),
  },
  {
    source:
      'OpenAI context_length_exceeded and vLLM: "This model\'s maximum context length is N tokens. However, you requested M tokens (…)" / "…your messages resulted in M tokens"',
    pattern:
      /maximum context length is ([\d,]+) tokens\.?\s*however,? (you requested|your messages resulted in) ([\d,]+) tokens/i,
    read: (m) => ({ limit: n(m[1]), actual: n(m[3]), ...(/messages/i.test(m[2]) ? { promptTokens: n(m[3]) } : {}) }),
  },
  {
    source: 'OpenAI-compatible servers (vLLM, Bedrock Llama): "maximum context length is N tokens" without the count',
    pattern: /maximum context length is ([\d,]+) tokens/i,
    read: (m) => ({ limit: n(m[1]) }),
  },
  {
    source:
      'Anthropic Messages (https://docs.claude.com/en/api/errors), also relayed by Bedrock and Vertex: "prompt is too long: N tokens > M maximum"',
    pattern: /prompt is too long:\s*([\d,]+) tokens\s*>\s*([\d,]+) maximum/i,
    read: (m) => ({ actual: n(m[1]), limit: n(m[2]), promptTokens: n(m[1]) }),
  },
  {
    source: 'Anthropic Messages: "input length and `max_tokens` exceed context limit: I + T > W"',
    pattern: /input length and `?max_tokens`? exceed context limit:\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*([\d,]+)/i,
    read: (m) => ({ actual: (n(m[1]) ?? 0) + (n(m[2]) ?? 0), limit: n(m[3]), promptTokens: n(m[1]) }),
  },
  {
    source:
      'Anthropic Messages, without counts: "prompt is too long" / "input length and `max_tokens` exceed context limit"',
    pattern: /prompt is too long|input length and `?max_tokens`? exceed context limit/i,
  },
  {
    source:
      'Gemini on Vertex AI (400 INVALID_ARGUMENT): "The input token count (N) exceeds the maximum number of tokens allowed (M)."',
    pattern: /input token count \(([\d,]+)\) exceeds the maximum number of tokens allowed \(([\d,]+)\)/i,
    read: (m) => ({ actual: n(m[1]), limit: n(m[2]), promptTokens: n(m[1]) }),
  },
  {
    source:
      'Amazon Bedrock ValidationException (Titan, Converse): "Too many input tokens. Max input tokens: N, request input token count: M"',
    pattern: /too many input tokens(?:\.?\s*max input tokens:\s*([\d,]+),\s*request input token count:\s*([\d,]+))?/i,
    read: (m) => ({ limit: n(m[1]), actual: n(m[2]), promptTokens: n(m[2]) }),
  },
  {
    source:
      'Amazon Bedrock ValidationException (Converse with Claude and others): "Input is too long for requested model."',
    pattern: /input is too long for requested model/i,
  },
  {
    source:
      'llama.cpp server and Ollama with truncate:false: "request (N tokens) exceeds the available context size (M tokens)"',
    pattern: /request \(([\d,]+) tokens\) exceeds the available context size \(([\d,]+) tokens\)/i,
    read: (m) => ({ actual: n(m[1]), limit: n(m[2]), promptTokens: n(m[1]) }),
  },
  {
    source:
      'llama.cpp server (exceed_context_size_error, n_prompt_tokens / n_ctx beside it): "the request exceeds the available context size"',
    pattern: /exceeds the available context size|exceed_context_size_error/i,
  },
  {
    source: 'llama.cpp server before exceed_context_size_error (HTTP 500): "Context size has been exceeded."',
    pattern: /context size has been exceeded/i,
  },
  {
    source:
      'Ollama with shift:false: "the prompt is longer than the context length…"; /api/embed: "the input length exceeds the context length"',
    pattern: /prompt is longer than the context length|input length exceeds the context length/i,
  },
  {
    source: 'OpenAI code context_length_exceeded with any wording',
    pattern: /context_length_exceeded/i,
  },
];

/** Statuses implied by provider error types that can arrive without an HTTP status (inside a stream). */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  // Anthropic error types (https://docs.claude.com/en/api/errors)
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
  // Google RPC status names (https://cloud.google.com/apis/design/errors#handling_errors)
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
  // Bedrock Runtime exceptions (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html#API_runtime_ConverseStream_Errors)
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  ModelTimeoutException: 408,
  ModelErrorException: 424,
  ServiceQuotaExceededException: 400,
  ModelNotReadyException: 429,
  ThrottlingException: 429,
  InternalServerException: 500,
  ServiceUnavailableException: 503,
  ModelStreamErrorException: 424,
  // OpenAI in-stream error types
  server_error: 500,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
};

/** Codes that mean "try again later" whatever status came with them. */
const RETRYABLE_CODES = new Set([
  'overloaded_error',
  'rate_limit_error',
  'api_error',
  'server_error',
  'rate_limit_exceeded',
  'ThrottlingException',
  'ModelNotReadyException',
  'ModelTimeoutException',
  'ModelStreamErrorException',
  'InternalServerException',
  'ServiceUnavailableException',
  'RESOURCE_EXHAUSTED',
  'UNAVAILABLE',
  'INTERNAL',
]);

/** Codes that are never worth a retry even with a retryable-looking status (quota spent, billing). */
const FATAL_CODES = new Set([
  'insufficient_quota',
  'billing_error',
  'billing_hard_limit_reached',
  'ServiceQuotaExceededException',
]);

const CONTENT_FILTER =
  /content[ _-]?filter|content management policy|responsible ai|ResponsibleAIPolicyViolation|guardrail_intervened|content_filtered|blocked by (?:the )?safety|finishReason:? ?SAFETY|PROHIBITED_CONTENT|blockReason/i;

const TRANSPORT =
  /terminated|socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|UND_ERR_SOCKET|other side closed|premature close|aborted stream|Connection error|ERR_HTTP2_STREAM_ERROR|ERR_HTTP2_SESSION_ERROR|ERR_HTTP2_GOAWAY_SESSION|NGHTTP2_/i;

type Dict = Record<string, unknown>;
const asDict = (v: unknown): Dict | undefined => (v !== null && typeof v === 'object' ? (v as Dict) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Parses JSON, and JSON nested inside a JSON string (Ollama wraps llama.cpp's error body that way). */
function parseBody(text: string | undefined): Dict | undefined {
  if (!text) return undefined;
  try {
    let parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) parsed = parsed[0]; // Vertex streamGenerateContent without alt=sse
    return asDict(parsed);
  } catch {
    return undefined;
  }
}

/** Folds a provider error body (any of the shapes we know) into `facts`. */
function readBody(body: Dict | undefined, facts: UpstreamErrorFacts, depth = 0): void {
  if (!body || depth > 3) return;
  const err = asDict(body['error']);
  const inner = err ?? body;
  for (const key of ['code', 'type', 'status', '__type']) {
    const value = inner[key];
    if (typeof value === 'string') facts.codes.push(value.split(/[:#]/).pop() ?? value);
  }
  const msg = str(inner['message']) ?? str(body['message']) ?? str(body['Message']);
  if (msg) {
    // Ollama: {"error":"{\"error\":{…llama.cpp body…}}"}; the real message is inside.
    const nested = msg.trimStart().startsWith('{') ? parseBody(msg) : undefined;
    if (nested) readBody(nested, facts, depth + 1);
    else facts.message = facts.message ? `${facts.message} ${msg}` : msg;
  }
  if (typeof body['error'] === 'string') {
    const nested = body['error'].trimStart().startsWith('{') ? parseBody(body['error']) : undefined;
    if (nested) readBody(nested, facts, depth + 1);
    else facts.message = facts.message ? `${facts.message} ${body['error']}` : body['error'];
  }
  facts.limit ??= num(inner['n_ctx']);
  facts.actual ??= num(inner['n_prompt_tokens']);
}

const ABORT_CLASSES: ReadonlyArray<abstract new (...args: never[]) => unknown> = [
  OpenAI.APIUserAbortError,
  OpenAI.APIConnectionTimeoutError,
  Anthropic.APIUserAbortError,
  Anthropic.APIConnectionTimeoutError,
];

function isAbort(e: Dict): boolean {
  if (ABORT_CLASSES.some((cls) => e instanceof cls)) return true;
  const name = str(e['name']) ?? '';
  return (
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    name === 'APIUserAbortError' ||
    name === 'APIConnectionTimeoutError' ||
    name === 'RequestTimeout' ||
    e['code'] === 'ABORT_ERR'
  );
}

/**
 * Reads the facts off any thrown value, following `cause` chains (SDKs wrap fetch failures).
 * Never throws.
 */
export function describeUpstreamError(err: unknown): UpstreamErrorFacts {
  const facts: UpstreamErrorFacts = { codes: [], message: '', aborted: false, transport: false, contentFilter: false };
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    const e = asDict(current);
    if (!e) {
      facts.message ||= String(current);
      break;
    }
    if (current instanceof UpstreamFailureError) {
      return { ...facts, codes: [`failure:${current.failure.kind}`] };
    }
    if (isAbort(e)) facts.aborted = true;
    if (current instanceof UpstreamHttpError) {
      facts.status ??= current.status;
      facts.headers ??= current.headers;
      const body = parseBody(current.body);
      if (body) readBody(body, facts);
      else facts.message ||= current.body;
    } else if (current instanceof UpstreamStreamError) {
      if (current.reason === 'incomplete' || current.reason === 'protocol') facts.transport = true;
      if (current.reason === 'content_filter') facts.contentFilter = true;
      facts.status ??= current.status;
      const body = parseBody(current.body);
      if (body) readBody(body, facts);
      facts.message ||= current.body ?? current.message;
    } else {
      // openai / Anthropic SDK APIError: status, headers, error (body or body.error), code, type
      const status = num(e['status']) ?? num(asDict(e['$metadata'])?.['httpStatusCode']);
      facts.status ??= status;
      const headers = e['headers'];
      if (headers && typeof headers === 'object') facts.headers ??= headers as HeaderBag;
      // AWS SDK exceptions keep the raw HTTP response (status, headers) in a hidden `$response`.
      const response = asDict(e['$response']);
      if (response) {
        facts.status ??= num(response['statusCode']);
        const h = response['headers'];
        if (h && typeof h === 'object') facts.headers ??= h as HeaderBag;
      }
      const before = facts.message;
      const body = asDict(e['error']);
      if (body) readBody(body, facts);
      const bodyGaveMessage = facts.message !== before;
      for (const key of ['code', 'type']) {
        const value = e[key];
        if (typeof value === 'string') facts.codes.push(value);
      }
      // AWS SDK: the exception's name is its type (ValidationException, ThrottlingException…)
      if (e['$metadata'] !== undefined || e['$fault'] !== undefined) facts.codes.push(str(e['name']) ?? '');
      const message = str(e['message']);
      // The SDKs' own message repeats the body as JSON; keep it only when the body said nothing.
      if (message && !bodyGaveMessage && !facts.message.includes(message)) {
        facts.message = facts.message ? `${facts.message} ${message}` : message;
      }
      const code = str(e['code']) ?? '';
      if (
        !facts.aborted &&
        (TRANSPORT.test(message ?? '') || TRANSPORT.test(code) || str(e['name']) === 'APIConnectionError')
      ) {
        facts.transport = true;
      }
    }
    current = e['cause'];
  }
  facts.codes = [...new Set(facts.codes.filter((c) => c.length > 0))];
  if (facts.status === undefined) {
    for (const code of facts.codes) {
      if (STATUS_BY_CODE[code] !== undefined) {
        facts.status = STATUS_BY_CODE[code];
        break;
      }
    }
  }
  return facts;
}

/**
 * OpenAI's 429 "Request too large for gpt-4o in organization … on tokens per min (TPM): Limit N,
 * Requested M" (https://platform.openai.com/docs/guides/rate-limits): the request (prompt plus
 * `max_tokens`) is larger than the organisation's per-minute token limit. N is a rate limit, not the
 * model's context window: read as a window it taught a 30,000-token window and a 413 for a 5-token
 * question. No retry of the same request can succeed either.
 */
const PER_MINUTE_TOO_LARGE =
  /request too large for .*?(?:tokens per min|TPM)\b.*?limit ([\d,]+),\s*requested ([\d,]+)/is;

/**
 * Matches the overflow table against the facts; undefined when no row matches. A 429 is never an
 * overflow: throttles that mention tokens ("too many tokens per minute", OpenAI's per-minute "Request
 * too large") speak of a rate limit, not of the window. A 5xx is matched like any other status,
 * because llama.cpp answers "Context size has been exceeded." with 500.
 */
export function matchOverflow(facts: UpstreamErrorFacts): OverflowFigures | undefined {
  if (facts.status === 429) return undefined;
  const text = `${facts.message} ${facts.codes.join(' ')}`;
  for (const form of OVERFLOW_FORMS) {
    const m = text.match(form.pattern);
    if (!m) continue;
    const read = form.read?.(m) ?? {};
    const limit = read.limit ?? facts.limit;
    const actual = read.actual ?? facts.actual;
    // llama.cpp's n_prompt_tokens is the prompt alone.
    const promptTokens = read.promptTokens ?? (read.actual === undefined ? facts.actual : undefined);
    return {
      ...(limit !== undefined ? { limit } : {}),
      ...(actual !== undefined ? { actual } : {}),
      ...(promptTokens !== undefined ? { promptTokens } : {}),
    };
  }
  if (facts.codes.includes('request_too_large')) return {};
  return undefined;
}

function clean(facts: UpstreamErrorFacts, fallback: string): string {
  return sanitizeProviderMessage(facts.message || fallback);
}

/**
 * Classifies any error a provider call threw into one `UpstreamFailure`, table-driven:
 *
 * 0. our egress policy refused the connection (anywhere in the `cause` chain) → `refused`;
 * 1. the caller's signal fired / SDK timeout → `timeout`;
 * 2. OpenAI's 429 "Request too large … on tokens per min (TPM): Limit N, Requested M" → `fatal` 429
 *    (a request above the per-minute token limit: no retry can succeed, and N is no window); an
 *    `OVERFLOW_FORMS` row matches (never on a 429) → `overflow` with `limit`, `actual`, `promptTokens`;
 * 3. content filter (a 400 with `content_filter`, a filtered stop) → `fatal`;
 * 4. billing / quota codes (`insufficient_quota`, `billing_error`) → `fatal`;
 * 5. 408, 409, 429, 5xx, 529 or a retryable code (`overloaded_error`, `ThrottlingException`,
 *    `RESOURCE_EXHAUSTED`…) → `retryable`, with `retry-after-ms` / `retry-after` read;
 * 6. a dropped connection or a stream that ended without its final event → `retryable` 502;
 * 7. any other 4xx (auth, permission, validation) → `fatal`; an embedding of the wrong shape → `fatal` 502;
 * 8. anything else → `unknown`.
 *
 * `provider` names the source in messages; the table itself is provider-agnostic, because gateways
 * (Foundry, Vertex MaaS, custom base URLs) relay other providers' wordings. Messages are sanitised with
 * `sanitizeProviderMessage`. Never throws.
 *
 * Sources: OpenAI https://platform.openai.com/docs/guides/error-codes; Azure OpenAI
 * https://learn.microsoft.com/azure/ai-foundry/openai/reference; Anthropic
 * https://docs.claude.com/en/api/errors; Bedrock
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html; Vertex
 * https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference; Ollama
 * https://github.com/ollama/ollama/blob/main/docs/api.md; llama.cpp server README.
 */
export function classifyUpstreamError(err: unknown, provider: ProviderId | EmbeddingProviderId): UpstreamFailure {
  if (err instanceof UpstreamFailureError) return err.failure;
  const refusal = findEgressRefusal(err);
  if (refusal) return { kind: 'refused', message: sanitizeProviderMessage(refusal.message) };
  const facts = describeUpstreamError(err);
  if (facts.aborted) return { kind: 'timeout' };

  const perMinute = facts.status === 429 ? PER_MINUTE_TOO_LARGE.exec(facts.message) : null;
  if (perMinute) {
    return {
      kind: 'fatal',
      status: 429,
      message: `${provider}: the request (${n(perMinute[2])} tokens, prompt plus max_tokens) is larger than the organisation's tokens-per-minute limit (${n(perMinute[1])}); lower maxTokens or raise the provider's rate limit`,
    };
  }
  const overflow = matchOverflow(facts);
  if (overflow) return { kind: 'overflow', ...overflow, message: clean(facts, `${provider}: context window exceeded`) };

  const status = facts.status;
  if (facts.contentFilter || facts.codes.includes('content_filter') || CONTENT_FILTER.test(facts.message)) {
    return { kind: 'fatal', status: status ?? 400, message: clean(facts, `${provider}: content filtered`) };
  }
  if (facts.codes.some((c) => FATAL_CODES.has(c))) {
    return { kind: 'fatal', status: status ?? 402, message: clean(facts, `${provider}: billing or quota`) };
  }
  if (
    (status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500)) ||
    facts.codes.some((c) => RETRYABLE_CODES.has(c))
  ) {
    const retryAfterMs = parseRetryAfter(facts.headers);
    return {
      kind: 'retryable',
      status: status ?? 503,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      message: clean(facts, `${provider}: HTTP ${status ?? 503}`),
    };
  }
  if (facts.transport) {
    return {
      kind: 'retryable',
      status: 502,
      message: clean(facts, `${provider}: the connection closed before the answer was complete`),
    };
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return { kind: 'fatal', status, message: clean(facts, `${provider}: HTTP ${status}`) };
  }
  if (err instanceof EmbeddingShapeError) {
    return { kind: 'fatal', status: 502, message: sanitizeProviderMessage(err.message) };
  }
  return { kind: 'unknown', message: clean(facts, `${provider}: unexpected error`) };
}
