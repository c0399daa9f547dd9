import { cleanHeading } from './markdown-title';

/** One ATX heading of a Markdown text: where its line starts (characters), its level (1–6) and its clean text. */
export interface MarkdownHeading {
  offset: number;
  level: number;
  text: string;
}

/** Characters of a section path at most (the full-text leg indexes it; a longer trail is cut at a heading). */
export const MAX_SECTION_CHARS = 300;
/** Lines longer than this are never headings (as in `markdownTitle`), so the scan stays linear. */
const MAX_HEADING_LINE = 1000;
/** Separator of the headings in a section path. */
export const SECTION_SEPARATOR = ' > ';

/**
 * The ATX headings (`#` … `######`, up to three spaces of indent) of a Markdown text outside fenced
 * code blocks, in order, with the character offset of their line; heading text cleaned of markup
 * (`cleanHeading`), headings left empty skipped. One pass over the lines.
 */
export function markdownHeadings(text: string): MarkdownHeading[] {
  const out: MarkdownHeading[] = [];
  let fence: { char: string; length: number } | null = null;
  let offset = 0;
  for (const line of text.split('\n')) {
    const at = offset;
    offset += line.length + 1;
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/.exec(line);
      if (close && close[1][0] === fence.char && close[1].length >= fence.length) fence = null;
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (open) {
      fence = { char: open[1][0], length: open[1].length };
      continue;
    }
    if (line.length > MAX_HEADING_LINE) continue;
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$/.exec(line);
    if (!atx) continue;
    const heading = cleanHeading(atx[2] ?? '');
    if (heading) out.push({ offset: at, level: atx[1].length, text: heading });
  }
  return out;
}

/**
 * The section path at `offset` of the text whose headings are `headings` (offsets ascending): the
 * trail of headings in force there, outermost first (an Hn closes every open heading of level ≥ n),
 * joined by " > ", e.g. `Storage > Configuring retention`. A heading whose line starts at `offset`
 * counts (a chunk that opens with a heading is under it). Null when no heading is in force. At most
 * {@link MAX_SECTION_CHARS} characters: the innermost headings are kept, outer ones dropped first;
 * a single longer heading is cut.
 */
export function sectionPathAt(headings: readonly MarkdownHeading[], offset: number): string | null {
  const trail: MarkdownHeading[] = [];
  for (const h of headings) {
    if (h.offset > offset) break;
    while (trail.length > 0 && trail[trail.length - 1].level >= h.level) trail.pop();
    trail.push(h);
  }
  if (trail.length === 0) return null;
  const texts = trail.map((h) => h.text);
  while (texts.length > 1 && texts.join(SECTION_SEPARATOR).length > MAX_SECTION_CHARS) texts.shift();
  return texts.join(SECTION_SEPARATOR).slice(0, MAX_SECTION_CHARS);
}

/**
 * The section path of each chunk of `text` (chunks in document order, overlapping or not, as
 * `chunkDocument` returns them): each chunk is found in `text` from the previous one's start on,
 * and its path is {@link sectionPathAt} its start (null where no heading is in force, or for a chunk
 * not found verbatim, which keeps the previous chunk's path).
 */
export function chunkSectionPaths(text: string, chunks: readonly string[]): Array<string | null> {
  const headings = markdownHeadings(text);
  let cursor = 0;
  let previous: string | null = null;
  return chunks.map((chunk) => {
    const at = text.indexOf(chunk, cursor);
    if (at < 0) return previous;
    cursor = at + 1;
    previous = sectionPathAt(headings, at);
    return previous;
  });
}
