import type { UsageFigures } from './api';
import { tokens, usd } from './copy';
import { el } from './view';

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Creates an SVG element with attributes and children; text goes through textContent (never markup).
 * Styling comes from classes in styles.css and presentation attributes: the gateway's CSP allows no
 * inline `style`.
 */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  children: Array<Node | string> = [],
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/**
 * The root `<svg>` of a chart: `viewBox` in chart units (scaled to the container's width by CSS),
 * `role="group"` named by its `<title>` and described by its `<desc>`, so a screen reader reads the
 * title, the description and then each bar's own label.
 */
export function chartRoot(id: string, width: number, height: number, title: string, desc: string): SVGSVGElement {
  return svg(
    'svg',
    {
      class: 'chart',
      id,
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'group',
      'aria-labelledby': `${id}-title`,
      'aria-describedby': `${id}-desc`,
    },
    [svg('title', { id: `${id}-title` }, [title]), svg('desc', { id: `${id}-desc` }, [desc])],
  );
}

/** The data attributes of a set of calls' figures, exactly as the API gave them. */
export function figureAttrs(figures: UsageFigures): Record<string, string> {
  return {
    'data-calls': String(figures.calls),
    'data-input-tokens': String(figures.inputTokens),
    'data-cache-read-tokens': String(figures.cacheReadTokens),
    'data-cache-write-tokens': String(figures.cacheWriteTokens),
    'data-output-tokens': String(figures.outputTokens),
    'data-reasoning-tokens': String(figures.reasoningTokens),
    'data-cost-usd': figures.costUsd,
    'data-unpriced-calls': String(figures.unpricedCalls),
  };
}

/** "3 calls, 7,200 input tokens (0 from cache), 900 output tokens, $0.019" (the unpriced calls named). */
export function figuresText(figures: UsageFigures): string {
  const cache = figures.cacheReadTokens + figures.cacheWriteTokens;
  const unpriced = figures.unpricedCalls ? ` (${figures.unpricedCalls} unpriced)` : '';
  return (
    `${tokens(figures.calls)} ${figures.calls === 1 ? 'call' : 'calls'}, ${tokens(figures.inputTokens)} input tokens` +
    `${cache ? ` (${tokens(cache)} cached)` : ''}, ${tokens(figures.outputTokens)} output tokens, ${usd(figures.costUsd)}${unpriced}`
  );
}

/**
 * The totals under a chart as a definition list (calls, input with its cache reads and writes,
 * output, cost), carrying the figures as data attributes; the cost shows rounded, whole on hover.
 */
export function totalsList(role: string, figures: UsageFigures): HTMLDListElement {
  const pair = (term: string, value: string, title?: string) => [
    el('dt', { text: term }),
    el('dd', { text: value, attrs: title ? { title } : {} }),
  ];
  return el('dl', { className: 'totals', attrs: { 'data-role': role, ...figureAttrs(figures) } }, [
    ...pair('Calls', tokens(figures.calls)),
    ...pair(
      'Input tokens',
      `${tokens(figures.inputTokens)} (cache read ${tokens(figures.cacheReadTokens)}, write ${tokens(figures.cacheWriteTokens)})`,
    ),
    ...pair('Output tokens', tokens(figures.outputTokens)),
    ...pair(
      'Cost',
      `${usd(figures.costUsd)}${figures.unpricedCalls ? ` + ${figures.unpricedCalls} unpriced calls` : ''}`,
      `USD ${figures.costUsd}`,
    ),
  ]);
}
