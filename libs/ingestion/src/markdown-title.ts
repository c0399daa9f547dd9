/**
 * A Markdown document's own title, or null when it has none:
 * 1. the front matter's `title` (a leading `---` … `---` block; quotes removed);
 * 2. else the first heading of any level outside fenced code blocks and HTML comments: an ATX
 *    heading (`#` to `######`, up to three spaces of indent), a setext heading (a text line underlined
 *    with `===` or `---`), or an HTML `<h1>`–`<h6>`.
 * The heading's text is cleaned of Markdown and HTML markup: images and badges are dropped, links keep
 * their text, emphasis and code marks are removed; a heading left empty (a badge alone) is skipped.
 * A `# comment` inside a fenced block is code, not a heading. Lines over 1,000 characters are never
 * headings, which keeps the scan linear in the text's length.
 */
export function markdownTitle(text: string): string | null {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let i = 0;
  if (/^---[ \t]*$/.test(lines[0] ?? '')) {
    const end = lines.findIndex((line, n) => n > 0 && /^(?:---|\.\.\.)[ \t]*$/.test(line));
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const m = /^title:[ \t]*(.+?)[ \t]*$/.exec(line);
        const title = m ? cleanHeading(unquote(m[1])) : '';
        if (title) return title;
      }
      i = end + 1;
    }
  }
  let fence: { char: string; length: number } | null = null;
  let inComment = false;
  let previous = '';
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1][0] === fence.char && close[1].length >= fence.length) fence = null;
      previous = '';
      continue;
    }
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      previous = '';
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (open) {
      fence = { char: open[1][0], length: open[1].length };
      previous = '';
      continue;
    }
    const commentStart = line.indexOf('<!--');
    if (commentStart >= 0 && !line.includes('-->', commentStart + 4)) {
      inComment = true;
      previous = '';
      continue;
    }
    // A heading is one short line; longer lines are prose (and keep the regexes below linear).
    const visible = line.length > MAX_HEADING_LINE ? '' : line.replace(/<!--.*?-->/g, '');
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(visible);
    const html = atx ? null : /<h([1-6])\b[^>]*>(.*?)<\/h\1\s*>/i.exec(visible);
    const setext = !atx && !html && previous && /^ {0,3}(?:=+|-+)[ \t]*$/.test(visible) ? previous : null;
    const candidate = atx ? (atx[1] ?? '') : html ? html[2] : setext;
    if (candidate !== null) {
      const title = cleanHeading(candidate);
      if (title) return title;
    }
    previous =
      visible.trim() && !atx && !/^ {0,3}(?:[-*+]|\d+[.)])[ \t]/.test(visible) && !visible.startsWith('    ')
        ? visible.trim()
        : '';
  }
  return null;
}

const MAX_HEADING_LINE = 1000;

function unquote(value: string): string {
  const m = /^(["'])(.*)\1$/.exec(value);
  return m ? m[2] : value;
}

/** Heading text without markup: images dropped, links kept as their text, tags and marks removed. */
export function cleanHeading(raw: string): string {
  return raw
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/!\[[^\]]*\]\[[^\]]*\]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/(\*\*|__|`)/g, '')
    .replace(/(^|\s)[*_]([^*_]+)[*_](?=\s|$)/g, '$1$2')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
