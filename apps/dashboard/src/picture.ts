import { type BudgetEvent, promptInputLimit } from '@ask/ask-contracts';
import type { SessionUsage, StoredMessage, UsageFigures } from './api';
import { chartRoot, figureAttrs, figuresText, svg, totalsList } from './chart';
import { tokens, turnRanges, usd } from './copy';
import { el } from './view';

type Ranges = Array<[number, number]>;

/**
 * How the session's newest prompt carried an earlier turn: verbatim, as its summary, under the
 * session summary, or not at all (`dropped`); `latest` is the newest turn itself, `unknown` a turn
 * whose newest prompt stored no budget.
 */
export type TurnFate = 'latest' | 'verbatim' | 'summarised' | 'compacted' | 'dropped' | 'unknown';

/** One bar of the session picture: a turn's prompt against its window, from the stored message. */
export interface PictureBar {
  /** 1-based position in the session. */
  turn: number;
  askId: string;
  /**
   * The stored budget's planned prompt tokens (`used`, system prompt included), window, and the
   * prompt's input limit `window − maxTokens − margin` (= `available + reserve`: `used` never exceeds
   * it); null without a budget.
   */
  used: number | null;
  window: number | null;
  inputLimit: number | null;
  /** The prompt tokens the provider reported for the answer (the message's `promptTokens`). */
  promptTokens: number | null;
  /** Earlier turns this turn's prompt dropped / summarised / compacted (budget `memory`, 1-based ranges). */
  turnsDropped: number;
  dropped: Ranges;
  summarised: Ranges;
  compacted: Ranges;
  fate: TurnFate;
  /** The ask's calls (answer, retry, count, summary), or null when the ledger has none for it. */
  usage: UsageFigures | null;
}

export interface SessionPicture {
  bars: PictureBar[];
  /** Every call of the session (asks that failed included), from the ledger. */
  totals: UsageFigures;
}

/** The figures of one ask's calls, without its id. */
function figuresOf(ask: UsageFigures & { askId?: string }): UsageFigures {
  const { askId: _askId, ...figures } = ask;
  return figures;
}

function within(ranges: Ranges | undefined, turn: number): boolean {
  return (ranges ?? []).some(([a, b]) => turn >= a && turn <= b);
}

/**
 * The turn's fate under the newest prompt's budget: by its `memory` ranges, or for a budget stored
 * before memory existed, by `keptTurnIds` (kept verbatim, else dropped).
 */
function fateOf(turn: number, messageId: string, newest: BudgetEvent | null, count: number): TurnFate {
  if (turn === count) return 'latest';
  if (!newest) return 'unknown';
  const m = newest.memory;
  if (!m) return newest.keptTurnIds.includes(messageId) ? 'verbatim' : 'dropped';
  if (within(m.verbatim, turn)) return 'verbatim';
  if (within(m.summarised, turn)) return 'summarised';
  if (within(m.compacted, turn)) return 'compacted';
  if (within(m.dropped, turn)) return 'dropped';
  return 'unknown';
}

/**
 * The session picture's data: one bar per stored message (oldest first) with its stored budget and
 * the ledger's figures of its ask, and the session's totals. Every figure is a stored one; nothing
 * is estimated here.
 */
export function sessionPicture(messages: readonly StoredMessage[], usage: SessionUsage): SessionPicture {
  const byAsk = new Map(usage.asks.map((a) => [a.askId, a]));
  const newest = messages[messages.length - 1]?.budget ?? null;
  const bars = messages.map((m, i): PictureBar => {
    const b = m.budget;
    const ask = byAsk.get(m.askId);
    return {
      turn: i + 1,
      askId: m.askId,
      used: b?.used ?? null,
      window: b?.window ?? null,
      inputLimit: b ? inputLimitOf(b) : null,
      promptTokens: m.promptTokens,
      turnsDropped: b?.turnsDropped ?? 0,
      dropped: b?.memory?.dropped ?? [],
      summarised: b?.memory?.summarised ?? [],
      compacted: b?.memory?.compacted ?? [],
      fate: fateOf(i + 1, m.id, newest, messages.length),
      usage: ask ? figuresOf(ask) : null,
    };
  });
  return { bars, totals: usage.totals };
}

/** The prompt's input limit of a stored budget (window − max_tokens − margin); null when a figure is missing. */
function inputLimitOf(b: BudgetEvent): number | null {
  const limit = promptInputLimit(b);
  return Number.isFinite(limit) ? limit : null;
}

const FATE_WORDS: Record<TurnFate, string> = {
  latest: 'the newest turn',
  verbatim: 'carried verbatim by the newest prompt',
  summarised: 'carried as its summary by the newest prompt',
  compacted: 'carried under the session summary by the newest prompt',
  dropped: 'dropped from the newest prompt',
  unknown: 'no stored budget says how the newest prompt carried it',
};

/** "turn 3" or "turns 1–3, 5": the word agrees with how many turns the ranges hold. */
function turnsText(ranges: Ranges): string {
  const count = ranges.reduce((n, [a, b]) => n + b - a + 1, 0);
  return `${count === 1 ? 'turn' : 'turns'} ${turnRanges(ranges)}`;
}

/** A bar's label for a screen reader, with every figure it shows. */
export function barLabel(bar: PictureBar): string {
  const parts = [
    bar.used === null
      ? `Turn ${bar.turn}: no budget stored`
      : `Turn ${bar.turn}: prompt ${tokens(bar.used)} of ${tokens(bar.window ?? 0)} tokens (input limit ${tokens(bar.inputLimit ?? 0)})`,
  ];
  if (bar.dropped.length) parts.push(`its prompt dropped ${turnsText(bar.dropped)}`);
  else if (bar.turnsDropped) parts.push(`its prompt dropped ${tokens(bar.turnsDropped)} earlier turns`);
  if (bar.summarised.length) parts.push(`summarised ${turnsText(bar.summarised)}`);
  if (bar.compacted.length) parts.push(`compacted ${turnsText(bar.compacted)}`);
  if (bar.usage) parts.push(`cost ${usd(bar.usage.costUsd)}`);
  parts.push(FATE_WORDS[bar.fate]);
  return `${parts.join('; ')}.`;
}

// Chart geometry, in viewBox units.
const SLOT = 72;
const LEFT = 64;
const TOP = 28;
const PLOT = 170;
const BOTTOM = 58;

/** The marks under a bar: what its prompt dropped (✕), summarised (≈) and compacted (⊂). */
function marks(bar: PictureBar): string[] {
  const out: string[] = [];
  if (bar.dropped.length) out.push(`✕ ${turnRanges(bar.dropped)}`);
  else if (bar.turnsDropped) out.push(`✕ ${bar.turnsDropped}`);
  if (bar.summarised.length) out.push(`≈ ${turnRanges(bar.summarised)}`);
  if (bar.compacted.length) out.push(`⊂ ${turnRanges(bar.compacted)}`);
  return out;
}

/**
 * Draws the session picture as plain SVG: per turn, a bar of the prompt's planned
 * tokens with the number above it, the window (solid line) and the budget's input limit (dashed)
 * over its slot, marks under it for the turns its prompt dropped or summarised, the bar's fill saying
 * how the newest prompt carried the turn; a legend; the session's totals. Every bar carries its
 * figures as data attributes (`data-used`, `data-window`, `data-input-limit`, `data-prompt-tokens`,
 * `data-dropped` JSON ranges, `data-fate`, the ask's ledger figures).
 */
export function renderSessionPicture(picture: SessionPicture): HTMLElement {
  const { bars } = picture;
  const width = LEFT + Math.max(bars.length, 3) * SLOT + 16;
  const height = TOP + PLOT + BOTTOM;
  const top = Math.max(1, ...bars.flatMap((b) => [b.window ?? 0, b.used ?? 0, b.promptTokens ?? 0]));
  const y = (value: number) => TOP + PLOT - (value / top) * PLOT;
  const root = chartRoot(
    'session-chart',
    width,
    height,
    'Prompt tokens per turn against the context window',
    `${bars.length} turns. Each bar is the prompt's planned tokens; the solid line is the window, the dashed line the input limit (window minus the answer's reserve and margins). ✕ marks turns a prompt dropped, ≈ turns it summarised.`,
  );
  root.append(
    svg('line', { class: 'axis', x1: LEFT, x2: width - 8, y1: y(0), y2: y(0) }),
    svg('text', { class: 'axis-label', x: LEFT - 6, y: y(0), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, [
      '0',
    ]),
  );
  const list = svg('g', { role: 'list' });
  let lastWindow: number | null = null;
  let lastLimit: number | null = null;
  for (const [i, bar] of bars.entries()) {
    const x0 = LEFT + i * SLOT;
    const attrs: Record<string, string> = {
      class: `bar fate-${bar.fate}`,
      role: 'listitem',
      'aria-label': barLabel(bar),
      'data-turn': String(bar.turn),
      'data-ask-id': bar.askId,
      'data-used': bar.used === null ? '' : String(bar.used),
      'data-window': bar.window === null ? '' : String(bar.window),
      'data-input-limit': bar.inputLimit === null ? '' : String(bar.inputLimit),
      'data-prompt-tokens': bar.promptTokens === null ? '' : String(bar.promptTokens),
      'data-turns-dropped': String(bar.turnsDropped),
      'data-dropped': JSON.stringify(bar.dropped),
      'data-summarised': JSON.stringify(bar.summarised),
      'data-compacted': JSON.stringify(bar.compacted),
      'data-fate': bar.fate,
      ...(bar.usage ? figureAttrs(bar.usage) : {}),
    };
    const g = svg('g', attrs);
    if (bar.window !== null && bar.inputLimit !== null) {
      g.append(
        svg('line', { class: 'window-line', x1: x0, x2: x0 + SLOT, y1: y(bar.window), y2: y(bar.window) }),
        svg('line', { class: 'limit-line', x1: x0, x2: x0 + SLOT, y1: y(bar.inputLimit), y2: y(bar.inputLimit) }),
      );
      // The lines' values where they start (in the left margin, beside the axis: a bar's own value sits
      // just above the bar, which near the limit is where an in-plot label overlapped it) and where
      // they change (in the plot, on a halo of the page's colour so a bar behind stays legible).
      if (bar.window !== lastWindow) g.append(lineLabel(i, x0, y(bar.window), 'window', bar.window));
      if (bar.inputLimit !== lastLimit) g.append(lineLabel(i, x0, y(bar.inputLimit), 'limit', bar.inputLimit));
      lastWindow = bar.window;
      lastLimit = bar.inputLimit;
    }
    if (bar.used !== null) {
      g.append(
        svg('rect', {
          class: 'bar-rect',
          x: x0 + SLOT * 0.2,
          y: y(bar.used),
          width: SLOT * 0.6,
          height: Math.max(1, y(0) - y(bar.used)),
        }),
        svg('text', { class: 'bar-value', x: x0 + SLOT / 2, y: y(bar.used) - 4, 'text-anchor': 'middle' }, [
          tokens(bar.used),
        ]),
      );
    }
    g.append(
      svg('text', { class: 'bar-turn', x: x0 + SLOT / 2, y: y(0) + 16, 'text-anchor': 'middle' }, [`T${bar.turn}`]),
      ...marks(bar).map((mark, k) =>
        svg('text', { class: 'bar-mark', x: x0 + SLOT / 2, y: y(0) + 31 + k * 13, 'text-anchor': 'middle' }, [mark]),
      ),
    );
    list.append(g);
  }
  root.append(list);
  const legend = el('ul', { className: 'legend' }, [
    legendItem('fate-latest', 'newest turn'),
    legendItem('fate-verbatim', 'carried verbatim'),
    legendItem('fate-summarised', 'carried as summary'),
    legendItem('fate-compacted', 'in the session summary'),
    legendItem('fate-dropped', 'dropped'),
    el('li', { text: '— window, - - input limit; ✕ dropped, ≈ summarised by that prompt' }),
  ]);
  return el('figure', { className: 'picture', attrs: { 'data-role': 'session-picture' } }, [
    el('figcaption', { text: 'This session: prompt tokens per turn' }),
    el('div', { className: 'chart-scroll' }, [root]),
    legend,
    el('p', { className: 'totals-line', text: `Session total: ${figuresText(picture.totals)}.` }),
    totalsList('session-totals', picture.totals),
  ]);
}

/** A line's value label: right-aligned in the left margin for the first bar, else at the slot's left. */
function lineLabel(index: number, x0: number, lineY: number, name: string, value: number): SVGElement {
  return index === 0
    ? svg('text', { class: 'line-label', x: LEFT - 6, y: lineY, 'text-anchor': 'end', 'dominant-baseline': 'middle' }, [
        svg('tspan', { x: LEFT - 6, dy: '-0.55em' }, [name]),
        svg('tspan', { x: LEFT - 6, dy: '1.1em' }, [tokens(value)]),
      ])
    : svg('text', { class: 'line-label', x: x0 + 2, y: lineY - 4 }, [`${name} ${tokens(value)}`]);
}

function legendItem(fate: string, text: string): HTMLLIElement {
  return el('li', {}, [
    el('span', { className: `swatch ${fate}`, attrs: { 'aria-hidden': 'true' } }),
    document.createTextNode(text),
  ]);
}
