import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isUtf8 } from 'node:buffer';
import { AskError, AskErrorCode, invalidRequest } from '@ask/ask-errors';

/** Deepest nesting of objects and arrays accepted in a body (our DTOs need 3). */
export const MAX_BODY_DEPTH = 16;

/**
 * Most fields one object of a body or query may have: the widest DTO (`ProjectSettingsDto`,
 * `LlmSettingsDto`) declares fewer than 20. class-transformer's key handling is quadratic in an
 * object's field count: 600,000 unknown fields (7 MB, under the body limit) held the event loop for
 * minutes, for every tenant.
 */
export const MAX_OBJECT_FIELDS = 64;

/**
 * Most values (objects, arrays, strings, numbers… each counted once) one body or query may hold: the
 * largest valid body, 5,000 insights and 5,000 recommendations of 3 fields, holds 40,003.
 */
export const MAX_BODY_VALUES = 50_000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first problem of a string for storage and display: a NUL character (PostgreSQL text cannot hold
 * it) or a lone UTF-16 surrogate (`"\ud800"` in JSON: not a Unicode character, not encodable as UTF-8).
 */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode (lone surrogate)';
  return null;
}

/**
 * Field names rejected wherever they appear: JSON.parse keeps them as own keys, and code that copies
 * or merges objects would reach the prototype chain through them.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Rejects, before validation, a body or query holding a string (value or key) with a NUL or a lone
 * surrogate, a field named `__proto__`, `constructor` or `prototype` at any depth, nesting deeper
 * than {@link MAX_BODY_DEPTH}, an object with more than {@link MAX_OBJECT_FIELDS} fields, or more than
 * {@link MAX_BODY_VALUES} values in all: 400 `invalid_request` naming the field (dotted path, array
 * indices in brackets; `body` for the whole). Walks iteratively, so no input can overflow the stack,
 * and in time linear in the body before class-transformer sees it.
 */
@Injectable()
export class TextSafetyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' && metadata.type !== 'query') return value;
    const root = metadata.type === 'body' ? '' : 'query';
    const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
    let values = 0;
    for (let item = stack.pop(); item; item = stack.pop()) {
      const name = item.path || 'body';
      if (++values > MAX_BODY_VALUES) throw tooManyValues(root || 'body');
      if (typeof item.value === 'string') {
        const problem = textProblem(item.value);
        if (problem) throw invalidRequest(`${name}: ${problem}`);
      } else if (item.value !== null && typeof item.value === 'object') {
        if (item.depth >= MAX_BODY_DEPTH)
          throw invalidRequest(`${name}: nested too deeply (at most ${MAX_BODY_DEPTH} levels)`);
        const isArray = Array.isArray(item.value);
        const size = isArray ? (item.value as unknown[]).length : Object.keys(item.value).length;
        if (!isArray && size > MAX_OBJECT_FIELDS)
          throw invalidRequest(`${name}: too many fields (at most ${MAX_OBJECT_FIELDS})`);
        if (values + stack.length + size > MAX_BODY_VALUES) throw tooManyValues(root || 'body');
        for (const [key, child] of Object.entries(item.value)) {
          if (!isArray && textProblem(key)) throw invalidRequest(`${name}: a field name ${textProblem(key)}`);
          // JSON.parse keeps `__proto__` as an own key that class-transformer then skips unseen.
          if (!isArray && FORBIDDEN_KEYS.has(key))
            throw invalidRequest(`${item.path ? `${item.path}.` : ''}${key}: property ${key} should not exist`);
          const path = isArray ? `${item.path}[${key}]` : item.path ? `${item.path}.${key}` : key;
          stack.push({ value: child, path, depth: item.depth + 1 });
        }
      }
    }
    return value;
  }
}

/**
 * The typed 415 for a body declared in another charset than UTF-8, the same whether body-parser
 * refused the charset itself (`latin1`, `windows-1252`) or would have decoded it (`utf-16`, `utf-32`).
 * The charset is echoed reduced to `[a-z0-9_-]`, at most 20 characters.
 */
export function unsupportedCharset(charset: string): AskError {
  return new AskError(AskErrorCode.InvalidRequest, {
    status: 415,
    error: 'unsupported media type',
    details: `content-type: charset=${charset
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, '')
      .slice(0, 20)} is not supported (UTF-8 only)`,
  });
}

const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * An upper bound of the values a JSON text holds below its root: the `,`, `[` and `{` outside strings
 * (each value inside an array or object follows one of them), counted in one pass over the bytes and
 * stopping once above `limit`. Runs before `JSON.parse`, whose time for 600,000 tiny fields is
 * seconds where a string of the same 7 MB takes milliseconds.
 */
export function jsonSeparatorsAbove(body: Buffer, limit: number): boolean {
  if (body.length <= limit) return false;
  let count = 0;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (byte === QUOTE) {
      // Skip the string natively: its end is the next quote not escaped by an odd run of backslashes.
      for (;;) {
        const end = body.indexOf(QUOTE, i + 1);
        if (end < 0) return false;
        let slashes = 0;
        while (body[end - 1 - slashes] === BACKSLASH) slashes++;
        i = end;
        if (slashes % 2 === 0) break;
      }
    } else if ((byte === COMMA || byte === OPEN_BRACKET || byte === OPEN_BRACE) && ++count > limit) return true;
  }
  return false;
}

/** The typed 400 of a body or query holding more than {@link MAX_BODY_VALUES} values. */
function tooManyValues(where: string): AskError {
  return invalidRequest(`${where}: too many values (at most ${MAX_BODY_VALUES.toLocaleString('en-US')})`);
}

/**
 * body-parser `verify` hook: a body declared in another charset than UTF-8 (`charset=utf-16`,
 * `utf-32`, which body-parser would decode) is a 415; a body that is not valid UTF-8 is a 400
 * `invalid_request` (body-parser would otherwise decode the bad bytes to U+FFFD silently and store
 * the damaged text); a body with more than {@link MAX_BODY_VALUES} values (by
 * {@link jsonSeparatorsAbove}) is a 400 before it is parsed.
 * @throws AskError 415 `details: content-type: …`; 400 `details: body: must be valid UTF-8` or
 *   `body: too many values (at most 50,000)`.
 */
export function rejectInvalidUtf8(_req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding?: string): void {
  if (encoding && encoding.toLowerCase() !== 'utf-8') throw unsupportedCharset(encoding);

  if (!isUtf8(body)) {
    throw new AskError(AskErrorCode.InvalidRequest, {
      error: 'malformed request body',
      details: 'body: must be valid UTF-8',
    });
  }
  if (jsonSeparatorsAbove(body, MAX_BODY_VALUES)) throw tooManyValues('body');
}
