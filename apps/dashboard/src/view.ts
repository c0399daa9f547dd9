import type { SessionSummary } from './api';
import { budgetSummary, errorCopy, memoryLine, relevanceLine } from './copy';
import { renderMarkdown } from './markdown';
import type { Turn } from './turn';

/** Creates an element with text and children; text always goes through textContent (never HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; attrs?: Record<string, string> } = {},
  children: Node[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** The DOM of one turn; `update` redraws only what an event can change. */
export class TurnView {
  readonly root: HTMLLIElement;
  private readonly answer: HTMLDivElement;
  private readonly meta: HTMLDivElement;

  constructor(
    readonly turn: Turn,
    index: number,
  ) {
    this.answer = el('div', { className: 'answer', attrs: { 'data-role': 'answer' } });
    this.meta = el('div', { className: 'turn-meta' });
    this.root = el('li', { className: 'turn', attrs: { 'aria-label': `Turn ${index}` } }, [
      el('h3', { className: 'question', attrs: { 'data-role': 'question' } }, [
        el('span', { className: 'visually-hidden', text: 'You asked: ' }),
        document.createTextNode(turn.question),
      ]),
      this.answer,
      this.meta,
    ]);
    this.update();
  }

  /**
   * Redraws the answer only (the frequent case: a delta), as sanitised Markdown ({@link renderMarkdown});
   * `data-markdown` keeps the answer's own text, exactly as streamed and stored.
   */
  updateAnswer(): void {
    if (this.answer.dataset['markdown'] !== this.turn.answer) {
      this.answer.replaceChildren(renderMarkdown(this.turn.answer));
      this.answer.dataset['markdown'] = this.turn.answer;
    }
    this.root.dataset['status'] = this.turn.status;
    this.answer.classList.toggle('streaming', this.turn.status === 'streaming' || this.turn.status === 'pending');
  }

  /** Redraws everything: answer, budget line, sources, error. */
  update(): void {
    this.updateAnswer();
    if (this.turn.status === 'pending' && !this.turn.answer) {
      this.answer.textContent = '';
      this.answer.dataset['markdown'] = '';
    }
    this.meta.replaceChildren(...this.budgetNodes(), ...this.sourceNodes(), ...this.errorNodes());
  }

  private budgetNodes(): Node[] {
    const budget = this.turn.budget;
    if (!budget) return [];
    const { kept, dropped } = budgetSummary(budget);
    const nodes: Node[] = [el('p', { className: 'budget', text: kept, attrs: { 'data-role': 'budget' } })];
    if (dropped) nodes.push(el('p', { className: 'dropped', text: dropped, attrs: { 'data-role': 'dropped' } }));
    const memory = memoryLine(budget);
    if (memory) nodes.push(el('p', { className: 'memory', text: memory, attrs: { 'data-role': 'memory' } }));
    const relevance = relevanceLine(budget);
    if (relevance) {
      nodes.push(el('p', { className: 'relevance', text: relevance, attrs: { 'data-role': 'relevance' } }));
    }
    return nodes;
  }

  private sourceNodes(): Node[] {
    const sources = this.turn.sources;
    if (!sources.length) return [];
    const items = sources.map((source) =>
      el('li', {}, [
        el('span', { className: 'source-title', text: source.title }),
        el('span', { className: 'source-kind', text: ` · ${source.kind}` }),
        ...(source.source && source.source !== source.title
          ? [el('span', { className: 'source-uri', text: ` · ${source.source}` })]
          : []),
      ]),
    );
    return [
      el('section', { className: 'sources', attrs: { 'data-role': 'sources' } }, [
        el('h4', { text: `Sources (${sources.length})` }),
        el('ol', {}, items),
      ]),
    ];
  }

  private errorNodes(): Node[] {
    const error = this.turn.error;
    if (!error) return [];
    const facts = el('dl', {}, [
      el('dt', { text: 'Status' }),
      el('dd', { text: error.status ? String(error.status) : 'no response' }),
      el('dt', { text: 'Code' }),
      el('dd', { text: error.code }),
      el('dt', { text: 'Message' }),
      el('dd', { text: error.error }),
      ...(error.details
        ? [el('dt', { text: 'Details' }), el('dd', { className: 'details-text', text: error.details })]
        : []),
    ]);
    return [
      el('div', { className: 'error', attrs: { role: 'alert', 'data-role': 'error', 'data-code': error.code } }, [
        el('p', { className: 'error-copy', text: errorCopy(error) }),
        el('details', {}, [el('summary', { text: 'What happened' }), facts]),
      ]),
    ];
  }
}

/** How long a row's delete button waits for its confirming second click (ms). */
export const DELETE_CONFIRM_MS = 5000;

/**
 * One row of the sessions list: open (continue) and delete, the delete asking for a second click
 * within {@link DELETE_CONFIRM_MS}. The title (the session's first question) shows on up to two lines
 * and whole on hover (`title`), so sessions that start alike ("How do I create…") can be told apart.
 *
 * The armed state (first click given, waiting for the confirmation) belongs to the caller: `armedUntil`
 * (epoch ms, or null) draws the row armed until then, and `actions.armed` reports each change, so a
 * list redrawn meanwhile (the refresh after an answer ends) keeps a pending confirmation instead of
 * silently resetting it under the user's pointer.
 */
export function sessionRow(
  session: SessionSummary,
  current: boolean,
  actions: { open(): void; remove(): void; armed?(until: number | null): void },
  armedUntil: number | null = null,
): HTMLLIElement {
  const title = session.title || 'Untitled session';
  const when = new Date(session.updatedAt);
  const open = el(
    'button',
    { className: 'session-open', attrs: { type: 'button', 'data-session-id': session.id, title } },
    [
      el('span', { className: 'session-title', text: title }),
      el('small', {
        className: 'muted',
        text: `${session.messageCount} ${session.messageCount === 1 ? 'turn' : 'turns'} · ${when.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })}`,
      }),
    ],
  );
  if (current) open.setAttribute('aria-current', 'true');
  open.addEventListener('click', actions.open);
  const remove = el('button', {
    className: 'session-delete',
    text: 'Delete',
    attrs: { type: 'button', 'aria-label': `Delete session “${title}”` },
  });
  let armed: ReturnType<typeof setTimeout> | null = null;
  const disarm = () => {
    armed = null;
    remove.textContent = 'Delete';
    remove.setAttribute('aria-label', `Delete session “${title}”`);
    actions.armed?.(null);
  };
  const arm = (until: number) => {
    remove.textContent = 'Confirm';
    remove.setAttribute('aria-label', `Confirm: delete session “${title}”`);
    armed = setTimeout(() => {
      if (remove.isConnected) disarm();
    }, until - Date.now());
    actions.armed?.(until);
  };
  if (armedUntil !== null && armedUntil > Date.now()) arm(armedUntil);
  remove.addEventListener('click', () => {
    if (armed) {
      clearTimeout(armed);
      armed = null;
      actions.armed?.(null);
      actions.remove();
      return;
    }
    arm(Date.now() + DELETE_CONFIRM_MS);
  });
  return el('li', { className: current ? 'session current' : 'session' }, [open, remove]);
}
