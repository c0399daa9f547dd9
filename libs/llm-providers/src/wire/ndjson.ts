import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { throwIfAborted } from '../errors/upstream-errors';

/**
 * Splits an NDJSON body (Ollama's `/api/chat`) into lines with `node:readline` (LF or CRLF, UTF-8
 * across chunk boundaries, the last line yielded even without a trailing newline).
 * @throws the abort error when `signal` fires.
 */
export async function* readNdjsonLines(
  body: ReadableStream<Uint8Array> | null,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  if (!body) return;
  const input = Readable.fromWeb(body as Parameters<typeof Readable.fromWeb>[0]);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      throwIfAborted(signal);
      yield line;
    }
    throwIfAborted(signal);
  } finally {
    lines.close();
    input.destroy();
  }
}
