import { ParseUUIDPipe } from '@nestjs/common';
import { invalidRequest } from '@ask/ask-errors';

/** A route parameter that must be a UUID; anything else is a 400 naming the parameter. */
export function uuidParam(name: string): ParseUUIDPipe {
  return new ParseUUIDPipe({
    exceptionFactory: () => invalidRequest(`${name}: must be a UUID`),
  });
}
