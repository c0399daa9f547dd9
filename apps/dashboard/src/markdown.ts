import DOMPurify from 'dompurify';
import { Marked } from 'marked';

/** GitHub-flavoured Markdown (fenced code, tables); a task list's checkbox is dropped by the sanitiser. */
const markdown = new Marked({ gfm: true, breaks: false, async: false });
// Raw HTML in an answer is shown as text, never parsed (the model's words are not markup); an image
// is its alt text (the page's CSP loads no image from elsewhere).
markdown.use({ renderer: { html: ({ text }) => escapeHtml(text), image: ({ text }) => escapeHtml(text) } });

/**
 * The tags and attributes an answer may keep after sanitising: what `marked` emits for Markdown, and
 * nothing that the page's Content-Security-Policy (the gateway's helmet config: `img-src 'self' data:`,
 * `style-src 'self'`, `script-src 'self'`) would block and report on the console: no `style`
 * attribute, no images (an answer's `![…](https://…)` keeps its alt text only), no scripts or forms.
 */
const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
];
const ALLOWED_ATTR = ['href', 'title', 'start', 'align', 'class'];

/** Escapes `& < > " '` for HTML text. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The HTML `marked` writes for an answer's Markdown (not yet sanitised: {@link renderMarkdown} is
 * what the page uses). An image becomes its alt text; raw HTML is escaped as text.
 */
export function markdownHtml(source: string): string {
  return markdown.parse(source, { async: false }) as string;
}

let hooked = false;

/**
 * An answer's Markdown as sanitised DOM (DOMPurify over `marked`'s HTML, {@link ALLOWED_TAGS}): code
 * blocks as `<pre><code class="language-…">`, links opened in a new tab without referrer. Safe for a
 * partial answer while it streams (an open code fence renders as a code block to the end).
 */
export function renderMarkdown(source: string): DocumentFragment {
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
    hooked = true;
  }
  return DOMPurify.sanitize(markdownHtml(source), {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
}
