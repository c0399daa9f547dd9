import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { chunkSectionPaths } from './section-path';
import { countTokens } from './token-length';

/** Options of {@link chunkDocument}; both in o200k_base tokens. */
export interface ChunkOptions {
  /** Target largest chunk; default 400 tokens. */
  chunkTokens?: number;
  /** Tokens shared by consecutive chunks; default 60 tokens. */
  overlapTokens?: number;
}

/** One chunk of a document. */
export interface DocumentChunk {
  text: string;
  /** Tokens of `text` under o200k_base. */
  tokenCount: number;
  /**
   * The trail of Markdown headings (H1…Hn) in force where the chunk starts, outermost first, joined
   * by " > " (`Storage > Configuring retention`), at most 300 characters; null under no heading
   * (`chunkSectionPaths`).
   */
  section?: string | null;
}

/**
 * Split points, strongest first: Markdown headings (H1 to H6), fenced code block ends, thematic
 * breaks, then paragraphs, lines, words and finally characters (LangChain's Markdown separators,
 * with H1 added since the ingested manuals use it for page titles).
 */
export const MARKDOWN_SEPARATORS = ['\n# ', ...RecursiveCharacterTextSplitter.getSeparatorsForLanguage('markdown')];

/**
 * Characters of one section: a longer document is cut into sections of at most this many characters
 * (at its strongest separator in the second half of the window, else at the window's end) and each
 * section is split on its own, the event loop free between sections. Bounds the work done in one go
 * (LangChain splits a whole text on a separator at once: one run of 1,000,000 characters was 1M
 * strings and a 1–2 s block of the ingestion worker); a document up to this size is split as before.
 */
export const SECTION_CHARS = 65_536;
/** Characters measured (counted, or found in the memo) between two yields to the event loop. */
const YIELD_EVERY_CHARS = 4_096;
/** Pieces measured between two yields (a run split into single characters measures one per call). */
const YIELD_EVERY_CALLS = 1_024;

/** Resolves on the next turn of the event loop (after pending I/O and timers). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `text` cut into sections of at most {@link SECTION_CHARS} characters (their concatenation is
 * `text`). Each cut is just before the last occurrence of the strongest separator (headings first,
 * then paragraphs, lines, spaces) in the second half of the window, so a separator starts the next
 * section as the splitter keeps it; where none occurs, at the window's end (never inside a surrogate pair).
 */
export function documentSections(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (text.length - start > SECTION_CHARS) {
    const end = start + SECTION_CHARS;
    // Only the window's second half is searched (lastIndexOf on the whole text would scan back to 0).
    const from = start + SECTION_CHARS / 2;
    const window = text.slice(from, end);
    let cut = -1;
    for (const separator of MARKDOWN_SEPARATORS) {
      if (separator === '') continue;
      const at = window.lastIndexOf(separator);
      if (at > 0) {
        cut = from + at;
        break;
      }
    }
    if (cut < 0) {
      cut = end;
      const code = text.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    out.push(text.slice(start, cut));
    start = cut;
  }
  out.push(text.slice(start));
  return out;
}

/**
 * Splits `text` into chunks of at most about `chunkTokens` o200k_base tokens, consecutive chunks
 * overlapping by up to `overlapTokens`, with LangChain's `RecursiveCharacterTextSplitter` on
 * Markdown-aware separators and a token length function (our bounded-cost o200k counter).
 *
 * A chunk can exceed `chunkTokens` by a few tokens: the splitter sums its pieces' counts and adds
 * separators by character length, and tokens do not add exactly across a join. `tokenCount` is the
 * exact count of each chunk's own text, and `section` the trail of headings above it
 * ({@link chunkSectionPaths}). Whitespace-only text gives no chunks. A document longer than
 * {@link SECTION_CHARS} is split section by section ({@link documentSections}; no chunk spans two
 * sections and no overlap crosses a cut), yielding to the event loop between sections and every
 * 4,096 characters or 1,024 pieces measured, so no step holds the loop for more than a bounded slice of work.
 * @throws RangeError unless 1 ≤ chunkTokens and 0 ≤ overlapTokens < chunkTokens (integers).
 */
export async function chunkDocument(text: string, options: ChunkOptions = {}): Promise<DocumentChunk[]> {
  const chunkTokens = options.chunkTokens ?? 400;
  const overlapTokens = options.overlapTokens ?? 60;
  if (!Number.isInteger(chunkTokens) || chunkTokens < 1)
    throw new RangeError(`chunkTokens must be a positive integer, got ${chunkTokens}`);
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= chunkTokens) {
    throw new RangeError(`overlapTokens must be an integer in 0..${chunkTokens - 1}, got ${overlapTokens}`);
  }
  if (text.trim() === '') return [];
  // The splitter measures the same pieces repeatedly (merging, then trimming the overlap).
  const memo = new Map<string, number>();
  let measured = 0;
  let calls = 0;
  const lengthFunction = (piece: string): number | Promise<number> => {
    let n = memo.get(piece);
    if (n === undefined) {
      n = countTokens(piece);
      memo.set(piece, n);
    }
    measured += piece.length;
    calls += 1;
    if (measured < YIELD_EVERY_CHARS && calls < YIELD_EVERY_CALLS) return n;
    measured = 0;
    calls = 0;
    const tokens = n;
    return nextTurn().then(() => tokens);
  };
  const splitter = new RecursiveCharacterTextSplitter({
    chunkSize: chunkTokens,
    chunkOverlap: overlapTokens,
    separators: MARKDOWN_SEPARATORS,
    keepSeparator: true,
    // LangChain awaits every call of the length function, so it may answer a number or a promise.
    lengthFunction: lengthFunction as (text: string) => number,
  });
  const chunks: Array<Omit<DocumentChunk, 'section'>> = [];
  const sections = documentSections(text);
  for (const [i, section] of sections.entries()) {
    if (i > 0) {
      memo.clear();
      await nextTurn();
    }
    for (const piece of await splitter.splitText(section)) {
      chunks.push({ text: piece, tokenCount: await lengthFunction(piece) });
    }
  }
  const paths = chunkSectionPaths(
    text,
    chunks.map((c) => c.text),
  );
  return chunks.map((c, i) => ({ ...c, section: paths[i] }));
}
