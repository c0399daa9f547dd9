import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { markdownTitle } from './markdown-title';

/** A document to ingest. */
export interface SourceDocument {
  /**
   * The document's key in the project, unique within one load: a JSONL line's `source_path`, else
   * `<folder name>/<path in folder>` (plus `#<id>` or `#line-<n>` for a JSONL line). Starting with the
   * folder's own name keeps two folders' `README.md` apart and survives moving the folder.
   */
  uri: string;
  title: string;
  text: string;
}

/** Why a file could not be loaded. */
export type DocumentLoadErrorCode = 'not_a_directory' | 'unreadable' | 'too_large' | 'invalid_jsonl';

/** A file or folder that cannot be loaded; `path` names it and `line` the JSONL line (1-based). */
export class DocumentLoadError extends Error {
  constructor(
    readonly code: DocumentLoadErrorCode,
    readonly path: string,
    message: string,
    readonly line?: number,
  ) {
    super(`${path}${line ? `:${line}` : ''}: ${message}`);
    this.name = 'DocumentLoadError';
  }
}

/** Options of {@link loadDocuments}. */
export interface LoadDocumentsOptions {
  /** Largest file read, in bytes; default 32 MiB (the PostgreSQL 15 manual's JSONL is 7.3 MB). */
  maxFileBytes?: number;
  /** Largest single document, in characters; default 1,000,000 (the manual's largest page has 116,802). */
  maxDocumentChars?: number;
  /**
   * JSONL document ids to skip. Default `['bookindex']`: the PostgreSQL manual's index page, 142,528
   * characters of bare terms and page references that would crowd out real passages in retrieval.
   */
  skipIds?: readonly string[];
  /**
   * The first segment of every file's uri; default the folder's base name. Two folders with the same
   * base name (`node_modules/bullmq` and `node_modules/@nestjs/bullmq`) need distinct names, or the
   * second one's `README.md` replaces the first's.
   */
  sourceName?: string;
  /** Files to leave out, by their path inside the folder (`/`-separated); default none. */
  skipFile?: (relativePath: string) => boolean;
}

const EXTENSIONS = new Set(['.md', '.markdown', '.txt', '.jsonl']);

/**
 * Loads every Markdown (`.md`, `.markdown`), text (`.txt`) and JSONL (`.jsonl`) file under `dir`,
 * recursively, in path order; other files, dot-entries and `node_modules` folders (other packages'
 * copies, not this folder's documents) are ignored. A JSONL line is one document
 * `{ id?, title?, source_path?, text }`; blank lines are skipped. Titles: the JSONL `title`, a
 * Markdown file's own title ({@link markdownTitle}: front-matter `title`, else its first heading of
 * any level outside code blocks), else the file name. Empty documents are dropped.
 * @throws DocumentLoadError `not_a_directory`, `unreadable` (permissions, I/O, invalid UTF-8),
 *   `too_large` (file over maxFileBytes or document over maxDocumentChars), `invalid_jsonl`
 *   (a line that is not a JSON object with a string `text`).
 */
export async function loadDocuments(dir: string, options: LoadDocumentsOptions = {}): Promise<SourceDocument[]> {
  const maxFileBytes = options.maxFileBytes ?? 32 * 1024 * 1024;
  const maxDocumentChars = options.maxDocumentChars ?? 1_000_000;
  const skipIds = new Set(options.skipIds ?? ['bookindex']);
  const info = await stat(dir).catch((error: Error) => {
    throw new DocumentLoadError('unreadable', dir, error.message);
  });
  if (!info.isDirectory()) throw new DocumentLoadError('not_a_directory', dir, 'not a directory');

  const documents: SourceDocument[] = [];
  const seen = new Map<string, number>();
  const push = (doc: SourceDocument, path: string, line?: number) => {
    if (doc.text.trim() === '') return;
    if (doc.text.length > maxDocumentChars) {
      throw new DocumentLoadError(
        'too_large',
        path,
        `document of ${doc.text.length} characters exceeds ${maxDocumentChars}`,
        line,
      );
    }
    const times = (seen.get(doc.uri) ?? 0) + 1;
    seen.set(doc.uri, times);
    documents.push(times === 1 ? doc : { ...doc, uri: `${doc.uri}#${times}` });
  };

  for (const path of await listFiles(dir)) {
    const inside = relative(dir, path).split(sep);
    if (options.skipFile?.(inside.join('/'))) continue;
    const rel = [options.sourceName ?? basename(resolve(dir)), ...inside].join('/');
    const size = (await stat(path)).size;
    if (size > maxFileBytes)
      throw new DocumentLoadError('too_large', path, `file of ${size} bytes exceeds ${maxFileBytes}`);
    const text = await readUtf8(path);
    if (extname(path).toLowerCase() !== '.jsonl') {
      const isMarkdown = ['.md', '.markdown'].includes(extname(path).toLowerCase());
      push({ uri: rel, title: (isMarkdown ? markdownTitle(text) : null) ?? basename(path), text }, path);
      continue;
    }
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === '') continue;
      const doc = parseJsonlLine(lines[i], path, i + 1);
      if (doc.id !== undefined && skipIds.has(doc.id)) continue;
      const uri = doc.source_path ?? `${rel}#${doc.id ?? `line-${i + 1}`}`;
      push({ uri, title: doc.title ?? doc.id ?? `${basename(path)}:${i + 1}`, text: doc.text }, path, i + 1);
    }
  }
  return documents;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: Error) => {
    throw new DocumentLoadError('unreadable', dir, error.message);
  });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path)));
    else if (entry.isFile() && EXTENSIONS.has(extname(entry.name).toLowerCase())) files.push(path);
  }
  return files;
}

async function readUtf8(path: string): Promise<string> {
  const bytes = await readFile(path).catch((error: Error) => {
    throw new DocumentLoadError('unreadable', path, error.message);
  });
  try {
    return new TextDecoder('utf-8', { fatal: true })
      .decode(bytes)
      .replace(/^\uFEFF/, '')
      .replace(/\r\n/g, '\n');
  } catch {
    throw new DocumentLoadError('unreadable', path, 'not valid UTF-8');
  }
}

interface JsonlDocument {
  id?: string;
  title?: string;
  source_path?: string;
  text: string;
}

function parseJsonlLine(line: string, path: string, lineNo: number): JsonlDocument {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new DocumentLoadError('invalid_jsonl', path, `not JSON (${(error as Error).message})`, lineNo);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DocumentLoadError('invalid_jsonl', path, 'a line must be a JSON object', lineNo);
  }
  const record = value as Record<string, unknown>;
  if (typeof record['text'] !== 'string')
    throw new DocumentLoadError('invalid_jsonl', path, 'field "text" must be a string', lineNo);
  for (const field of ['id', 'title', 'source_path'] as const) {
    const v = record[field];
    if (v !== undefined && v !== null && typeof v !== 'string' && !(field === 'id' && typeof v === 'number')) {
      throw new DocumentLoadError('invalid_jsonl', path, `field "${field}" must be a string`, lineNo);
    }
  }
  const str = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : String(v));
  return {
    id: str(record['id']),
    title: str(record['title']),
    source_path: str(record['source_path']),
    text: record['text'] as string,
  };
}
