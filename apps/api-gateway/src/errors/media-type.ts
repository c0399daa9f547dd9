import type { NextFunction, Request, Response } from 'express';
import { AskError, AskErrorCode } from '@ask/ask-errors';
import { redactedBody } from './ask-error.filter';

/** The media types a request body may be declared as: JSON, and the `+json` structured suffix. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

/**
 * Express middleware mounted before the body parser (so, like the charset 415, before
 * authentication): a request that carries a body (a content length above 0, or chunked) declared as
 * anything but JSON (`text/plain`, `multipart/form-data`,
 * a form, or no content type at all) is a 415 at once. The JSON parser would skip such a body and
 * the route would then report the fields as missing (`documents must be an array`), which sends the
 * sender after the wrong fault. A JSON body in another charset stays the parser's 415.
 */
export function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  // `content-length: 0` (fetch's POST without a body) is no body, though `req.is` counts it as one.
  const length = req.headers['content-length'];
  const empty = req.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) === 0);
  // `req.is` is null for a request without a body, false for a body of another type.
  if (empty || req.is(JSON_MEDIA_TYPES) !== false) return next();
  res.status(415).json(redactedBody(unsupportedMediaType(req.headers['content-type'])));
}

/**
 * The typed 415 (`invalid_request`, the seed's nearest code) for a body that is not JSON; the
 * declared type is echoed reduced to `[a-z0-9/+.-]`, at most 60 characters.
 */
export function unsupportedMediaType(contentType: string | undefined): AskError {
  const declared = (contentType ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9/+.-]/g, '')
    .slice(0, 60);
  return new AskError(AskErrorCode.InvalidRequest, {
    status: 415,
    error: 'unsupported media type',
    details: `content-type: ${declared || 'absent'} is not supported (send application/json)`,
  });
}
