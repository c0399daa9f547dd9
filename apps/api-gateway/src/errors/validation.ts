import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { invalidRequest } from '@ask/ask-errors';

/** Flattens class-validator errors into `field: reason` lines (nested fields dotted). */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    for (const reason of Object.values(error.constraints ?? {})) lines.push(`${path}: ${reason}`);
    if (error.children?.length) lines.push(...describeValidationErrors(error.children, path));
  }
  return lines;
}

/**
 * The global validation pipe: unknown fields are rejected, types are not coerced silently, and a bad
 * body is a 400 `invalid_request` whose details name every bad field.
 */
export function askValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => invalidRequest(describeValidationErrors(errors).join('; ')),
  });
}
