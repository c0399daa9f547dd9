import { parseRetryAfter, readHeader } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('prefers retry-after-ms (milliseconds)', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now)).toBe(1500);
  });

  it('reads retry-after as seconds or as an HTTP date', () => {
    expect(parseRetryAfter({ 'Retry-After': '2' }, now)).toBe(2000);
    expect(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now)).toBe(3000);
    expect(parseRetryAfter({ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }, now)).toBe(0);
  });

  it('ignores missing and unparseable values', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' }, now)).toBeUndefined();
  });
});

describe('readHeader', () => {
  it('reads case-insensitively from records and Headers', () => {
    expect(readHeader({ 'X-Request-Id': ['a', 'b'] }, 'x-request-id')).toBe('a');
    expect(readHeader(new Headers({ 'x-request-id': 'r1' }), 'X-Request-Id')).toBe('r1');
  });
});
