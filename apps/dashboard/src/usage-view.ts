import type { ProjectUsage } from './api';
import { chartRoot, figureAttrs, figuresText, svg, totalsList } from './chart';
import { tokens, usd } from './copy';
import { el } from './view';

// Geometry of a horizontal bar chart, in viewBox units: a row is the key on one line, the bar and its numbers under it.
const WIDTH = 560;
const ROW = 42;
const BAR_MAX = 300;

/**
 * One group's bar of the project usage view: its length is the group's input + output tokens
 * against the largest group's; the numbers beside it are the tokens and the exact cost rounded (the
 * data attributes keep every figure as the API gave it, `data-key` the group's key).
 */
function usageChart(id: string, title: string, usage: ProjectUsage): SVGSVGElement {
  const { groups } = usage;
  const height = Math.max(1, groups.length) * ROW + 8;
  const root = chartRoot(
    id,
    WIDTH,
    height,
    title,
    groups.length
      ? `${groups.length} groups; each bar is the group's input plus output tokens, with its cost beside it.`
      : 'No calls in this range.',
  );
  const most = Math.max(1, ...groups.map((g) => g.inputTokens + g.outputTokens));
  const list = svg('g', { role: 'list' });
  for (const [i, group] of groups.entries()) {
    const y0 = i * ROW + 4;
    const total = group.inputTokens + group.outputTokens;
    const length = Math.max(1, (total / most) * BAR_MAX);
    list.append(
      svg(
        'g',
        {
          class: 'usage-bar',
          role: 'listitem',
          'aria-label': `${group.key}: ${figuresText(group)}.`,
          'data-key': group.key,
          ...figureAttrs(group),
        },
        [
          svg('text', { class: 'usage-key', x: 0, y: y0 + 12 }, [group.key || '(no session)']),
          svg('rect', { class: 'usage-rect', x: 0, y: y0 + 18, width: length, height: 14 }),
          svg('text', { class: 'usage-value', x: length + 6, y: y0 + 30 }, [
            `${tokens(total)} tokens · ${usd(group.costUsd)}`,
          ]),
        ],
      ),
    );
  }
  root.append(list);
  return root;
}

/**
 * The project usage view: tokens and cost per UTC day and per provider/model over
 * the usage API's range, each as a bar chart with its numbers, and the range's totals. `byDay` and
 * `byModel` are the API's answers for the same range (their totals are equal).
 */
export function renderProjectUsage(byDay: ProjectUsage, byModel: ProjectUsage): HTMLElement {
  const range = `${byDay.from.slice(0, 10)} to ${byDay.to.slice(0, 10)}`;
  return el(
    'div',
    { className: 'usage-view', attrs: { 'data-role': 'project-usage', 'data-from': byDay.from, 'data-to': byDay.to } },
    [
      el('p', { className: 'muted', text: `Every upstream call of the project from ${range} (UTC).` }),
      el('figure', { className: 'picture', attrs: { 'data-role': 'usage-by-day' } }, [
        el('figcaption', { text: 'Tokens and cost per day' }),
        el('div', { className: 'chart-scroll' }, [usageChart('usage-day-chart', 'Tokens and cost per day', byDay)]),
      ]),
      el('figure', { className: 'picture', attrs: { 'data-role': 'usage-by-model' } }, [
        el('figcaption', { text: 'Tokens and cost per model' }),
        el('div', { className: 'chart-scroll' }, [
          usageChart('usage-model-chart', 'Tokens and cost per model', byModel),
        ]),
      ]),
      el('p', { className: 'totals-line', text: `Project total: ${figuresText(byDay.totals)}.` }),
      totalsList('project-totals', byDay.totals),
    ],
  );
}
