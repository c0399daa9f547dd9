import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
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
}

/**
 * Split points, strongest first: Markdown headings (H1 to H6), fenced code block ends, thematic
 * breaks, then paragraphs, lines, words and finally characters (LangChain's Markdown separators,
 * with H1 added since the ingested manuals use it for page titles).
 */
export const MARKDOWN_SEPARATORS = ['\n# ', ...RecursiveCharacterTextSplitter.getSeparatorsForLanguage('markdown')];

/**
 * Splits `text` into chunks of at most about `chunkTokens` o200k_base tokens, consecutive chunks
 * overlapping by up to `overlapTokens`, with LangChain's `RecursiveCharacterTextSplitter` on
 * Markdown-aware separators and a token length function (js-tiktoken, bundled ranks).
 *
 * A chunk can exceed `chunkTokens` by a few tokens: the splitter sums its pieces' counts and adds
 * separators by character length, and tokens do not add exactly across a join. `tokenCount` is the
 * exact count of each chunk's own text. Whitespace-only text gives no chunks.
 * @throws RangeError unless 1 ≤ chunkTokens and 0 ≤ overlapTokens < chunkTokens (integers).
 */
export async function chunkDocument(text: string, options: ChunkOptions = {}): Promise<DocumentChunk[]> {
  const chunkTokens = options.chunkTokens ?? 400;
  const overlapTokens = options.overlapTokens ?? 60;
  if (!Number.isInteger(chunkTokens) || chunkTokens < 1) throw new RangeError(`chunkTokens must be a positive integer, got ${chunkTokens}`);
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= chunkTokens) {
    throw new RangeError(`overlapTokens must be an integer in 0..${chunkTokens - 1}, got ${overlapTokens}`);
  }
  if (text.trim() === '') return [];
  // The splitter measures the same pieces repeatedly (merging, then trimming the overlap).
  const memo = new Map<string, number>();
  const lengthFunction = (piece: string): number => {
    let n = memo.get(piece);
    if (n === undefined) {
      n = countTokens(piece);
      memo.set(piece, n);
    }
    return n;
  };
  const splitter = new RecursiveCharacterTextSplitter({
    chunkSize: chunkTokens,
    chunkOverlap: overlapTokens,
    separators: MARKDOWN_SEPARATORS,
    keepSeparator: true,
    lengthFunction,
  });
  const pieces = await splitter.splitText(text);
  return pieces.map((piece) => ({ text: piece, tokenCount: countTokens(piece) }));
}
