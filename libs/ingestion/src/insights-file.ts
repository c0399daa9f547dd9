import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { DocumentLoadError } from './load-documents';

const insightsFileSchema = z.object({
  insights: z
    .array(
      z.object({
        id: z.union([z.string().min(1), z.number()]).transform(String),
        name: z.string().min(1),
        description: z.string(),
      }),
    )
    .default([]),
  recommendations: z
    .array(
      z.object({
        id: z.union([z.string().min(1), z.number()]).transform(String),
        title: z.string().min(1),
        body: z.string(),
      }),
    )
    .default([]),
});

/** The contents of an insights file: `{ insights: [{id, name, description}], recommendations: [{id, title, body}] }`. */
export type InsightsFile = z.infer<typeof insightsFileSchema>;

/** Largest insights file read, in bytes (16 MiB). */
export const MAX_INSIGHTS_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads and validates an insights file. Either list may be omitted (empty); ids are strings (numbers
 * are turned into strings) and unique within their list.
 * @throws DocumentLoadError `unreadable` (missing file, I/O), `too_large` (over 16 MiB), or
 *   `invalid_jsonl` (not JSON, or not the shape above; the message names the field).
 */
export async function loadInsightsFile(path: string): Promise<InsightsFile> {
  const bytes = await readFile(path).catch((error: Error) => {
    throw new DocumentLoadError('unreadable', path, error.message);
  });
  if (bytes.length > MAX_INSIGHTS_FILE_BYTES) {
    throw new DocumentLoadError('too_large', path, `file of ${bytes.length} bytes exceeds ${MAX_INSIGHTS_FILE_BYTES}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new DocumentLoadError('invalid_jsonl', path, `not JSON (${(error as Error).message})`);
  }
  return parseInsights(json, path);
}

/**
 * Validates an already-parsed insights document (e.g. an HTTP body).
 * @throws DocumentLoadError `invalid_jsonl` naming the first bad field; `source` names the input.
 */
export function parseInsights(json: unknown, source = 'insights'): InsightsFile {
  const parsed = insightsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DocumentLoadError('invalid_jsonl', source, `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  for (const kind of ['insights', 'recommendations'] as const) {
    const ids = new Set<string>();
    for (const item of parsed.data[kind]) {
      if (ids.has(item.id)) throw new DocumentLoadError('invalid_jsonl', source, `${kind}: duplicate id "${item.id}"`);
      ids.add(item.id);
    }
  }
  return parsed.data;
}
