import './styles.css';
import { promptInputLimit } from '@ask/ask-contracts';
import { ApiError, DashboardApi, type SessionSummary, type StoredMessage } from './api';
import { badgeText, errorCopy, STREAM_LOST_CODE, STREAM_LOST_COPY, tokens } from './copy';
import { renderSessionPicture, sessionPicture } from './picture';
import { followAsk } from './stream';
import { applyEvent, failTurn, newTurn, storedTurn, type Turn } from './turn';
import { renderProjectUsage } from './usage-view';
import { sessionRow, TurnView } from './view';

const KEY_STORAGE = 'ask.apiKey'; // sessionStorage: the key lives as long as the tab
const PROJECT_STORAGE = 'ask.projectId';

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} missing from index.html`);
  return node as T;
}

const ui = {
  projectForm: byId<HTMLFormElement>('project-form'),
  projectId: byId<HTMLInputElement>('project-id'),
  projectOptions: byId<HTMLDataListElement>('project-options'),
  apiKey: byId<HTMLInputElement>('api-key'),
  status: byId<HTMLParagraphElement>('status'),
  badge: byId<HTMLParagraphElement>('token-badge'),
  badgeValue: byId<HTMLSpanElement>('token-badge-value'),
  sessionList: byId<HTMLUListElement>('session-list'),
  sessionsEmpty: byId<HTMLParagraphElement>('sessions-empty'),
  newChat: byId<HTMLButtonElement>('new-chat'),
  chatHeading: byId<HTMLHeadingElement>('chat-heading'),
  turns: byId<HTMLOListElement>('turns'),
  askForm: byId<HTMLFormElement>('ask-form'),
  question: byId<HTMLTextAreaElement>('question'),
  askButton: byId<HTMLButtonElement>('ask-button'),
  picture: byId<HTMLElement>('session-picture'),
  pictureBody: byId<HTMLDivElement>('session-picture-body'),
  usage: byId<HTMLElement>('project-usage'),
  usageBody: byId<HTMLDivElement>('project-usage-body'),
};

const api = new DashboardApi(() => ui.apiKey.value);

const state: {
  projectId: string | null;
  sessionId: string | null;
  views: TurnView[];
  sessions: SessionSummary[];
  /** Closes the events stream of the ask in flight. */
  closeStream: (() => void) | null;
  /** The session whose delete waits for its confirming click, and until when (epoch ms): kept across redraws. */
  armedDelete: { sessionId: string; until: number } | null;
} = { projectId: null, sessionId: null, views: [], sessions: [], closeStream: null, armedDelete: null };

function setStatus(text: string): void {
  ui.status.textContent = text;
}

function setBusy(busy: boolean): void {
  ui.askButton.disabled = busy;
  ui.askButton.textContent = busy ? 'Answering…' : 'Ask';
}

function setBadge(turn: Turn | null): void {
  const budget = turn?.budget ?? null;
  ui.badgeValue.textContent = budget ? badgeText(budget) : '– / –';
  if (budget) {
    ui.badge.dataset['used'] = String(budget.used);
    ui.badge.dataset['window'] = String(budget.window);
    ui.badge.setAttribute(
      'aria-label',
      `Tokens: ${tokens(budget.used)} used of a ${tokens(budget.window)}-token context window`,
    );
  } else {
    delete ui.badge.dataset['used'];
    delete ui.badge.dataset['window'];
    ui.badge.setAttribute('aria-label', 'Tokens: no turn yet');
  }
  // Tight: the prompt fills 90% or more of its input limit (window − max_tokens − margin), so the next
  // turn will likely drop or summarise earlier ones.
  const tight = !!budget && budget.used >= 0.9 * promptInputLimit(budget);
  ui.badge.classList.toggle('badge-tight', tight);
}

function stopStream(): void {
  state.closeStream?.();
  state.closeStream = null;
  setBusy(false);
}

function showTurns(turns: Turn[], heading: string): void {
  stopStream();
  state.views = turns.map((turn, i) => new TurnView(turn, i + 1));
  ui.turns.replaceChildren(...state.views.map((v) => v.root));
  ui.chatHeading.textContent = heading;
  setBadge(null);
}

/**
 * Redraws the open session's picture from what is stored: its messages (with their budgets) and
 * its calls in the ledger. Hidden for a new chat; a failed read leaves the status line to say why.
 */
async function refreshPicture(messages?: StoredMessage[]): Promise<void> {
  const { projectId, sessionId } = state;
  if (!projectId || !sessionId) {
    ui.picture.hidden = true;
    ui.pictureBody.replaceChildren();
    return;
  }
  try {
    const [stored, usage] = await Promise.all([
      messages ?? api.getSession(projectId, sessionId).then((s) => s.messages),
      api.getSessionUsage(projectId, sessionId),
    ]);
    if (state.sessionId !== sessionId) return;
    ui.pictureBody.replaceChildren(renderSessionPicture(sessionPicture(stored, usage)));
    ui.picture.hidden = false;
  } catch (err) {
    reportError(err);
  }
}

/** Redraws the project usage view (per day and per model, the API's default range). */
async function refreshUsage(): Promise<void> {
  const projectId = state.projectId;
  if (!projectId) return;
  try {
    const [byDay, byModel] = await Promise.all([api.getUsage(projectId, 'day'), api.getUsage(projectId, 'model')]);
    if (state.projectId !== projectId) return;
    ui.usageBody.replaceChildren(renderProjectUsage(byDay, byModel));
    ui.usage.hidden = false;
  } catch (err) {
    reportError(err);
  }
}

function newChat(): void {
  state.sessionId = null;
  void refreshPicture();
  showTurns([], 'New chat');
  renderSessions();
  ui.question.focus();
}

function renderSessions(): void {
  ui.sessionsEmpty.hidden = state.sessions.length > 0;
  ui.sessionList.replaceChildren(
    ...state.sessions.map((session) =>
      sessionRow(
        session,
        session.id === state.sessionId,
        {
          open: () => void openSession(session.id),
          remove: () => void deleteSession(session),
          armed: (until) => {
            if (until !== null) state.armedDelete = { sessionId: session.id, until };
            else if (state.armedDelete?.sessionId === session.id) state.armedDelete = null;
          },
        },
        state.armedDelete?.sessionId === session.id ? state.armedDelete.until : null,
      ),
    ),
  );
}

async function refreshSessions(): Promise<void> {
  if (!state.projectId) return;
  try {
    state.sessions = await api.listSessions(state.projectId);
    renderSessions();
  } catch (err) {
    reportError(err);
  }
}

async function openSession(sessionId: string): Promise<void> {
  if (!state.projectId) return;
  try {
    const session = await api.getSession(state.projectId, sessionId);
    state.sessionId = session.id;
    showTurns(
      session.messages.map((m) => storedTurn(m.question, m.answer, m.askId, m.budget, m.sources)),
      session.title || 'Untitled session',
    );
    renderSessions();
    void refreshPicture(session.messages);
    setStatus(`Opened “${session.title}”: ${session.messages.length} turns. Ask a follow-up to continue it.`);
    ui.chatHeading.focus();
  } catch (err) {
    reportError(err);
  }
}

async function deleteSession(session: SessionSummary): Promise<void> {
  if (!state.projectId) return;
  try {
    await api.deleteSession(state.projectId, session.id);
    if (state.sessionId === session.id) newChat();
    setStatus(`Deleted “${session.title}”.`);
    await refreshSessions();
    ui.newChat.focus();
  } catch (err) {
    reportError(err);
  }
}

/** Errors outside a turn (listing, opening, deleting) go to the status line, with the copy by code. */
function reportError(err: unknown): void {
  const body = err instanceof ApiError ? err.body : { status: 0, code: 'internal_error', error: String(err) };
  setStatus(errorCopy(body));
}

async function ask(question: string): Promise<void> {
  const projectId = state.projectId;
  if (!projectId) {
    setStatus('Open a project first.');
    ui.projectId.focus();
    return;
  }
  const turn = newTurn(question);
  const view = new TurnView(turn, state.views.length + 1);
  state.views.push(view);
  ui.turns.append(view.root);
  setBusy(true);
  try {
    const accepted = await api.ask(projectId, question, state.sessionId);
    turn.askId = accepted.askId;
    view.root.dataset['askId'] = accepted.askId;
    if (state.sessionId !== accepted.sessionId) {
      state.sessionId = accepted.sessionId;
      ui.chatHeading.textContent = question.length > 80 ? `${question.slice(0, 79)}…` : question;
    }
    state.closeStream = followAsk(accepted.eventsUrl, {
      onEvent(id, type, data) {
        if (!applyEvent(turn, id, type, data)) return;
        if (type === 'delta' || type === 'reset') {
          view.updateAnswer();
          return;
        }
        view.update();
        if (type === 'budget') setBadge(turn);
        if (type === 'done' || type === 'error') finishTurn();
      },
      onLost() {
        failTurn(turn, {
          status: 0,
          code: STREAM_LOST_CODE,
          error: 'the events stream closed before the answer ended',
        });
        view.update();
        setStatus(STREAM_LOST_COPY);
        finishTurn();
      },
    });
  } catch (err) {
    failTurn(turn, err instanceof ApiError ? err.body : { status: 0, code: 'internal_error', error: String(err) });
    view.update();
    finishTurn();
  }
}

function finishTurn(): void {
  state.closeStream = null;
  setBusy(false);
  void refreshSessions();
  void refreshPicture();
  void refreshUsage();
}

async function openProject(): Promise<void> {
  const projectId = ui.projectId.value.trim();
  sessionStorage.setItem(KEY_STORAGE, ui.apiKey.value);
  void loadProjectOptions();
  if (!projectId) return;
  localStorage.setItem(PROJECT_STORAGE, projectId);
  state.projectId = projectId;
  state.sessions = [];
  newChat();
  setStatus('');
  ui.usage.hidden = true;
  void refreshUsage();
  await refreshSessions();
}

/** Fills the project picker when the key may list projects (the admin key); otherwise the id is typed. */
async function loadProjectOptions(): Promise<void> {
  try {
    const projects = await api.listProjects();
    ui.projectOptions.replaceChildren(
      ...(projects ?? []).map((p) => {
        const option = document.createElement('option');
        option.value = p.id;
        option.label = p.name;
        return option;
      }),
    );
  } catch {
    // The picker is a convenience; the id can always be typed.
  }
}

ui.projectForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void openProject();
});
ui.newChat.addEventListener('click', newChat);
ui.askForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const question = ui.question.value.trim();
  if (!question || ui.askButton.disabled) return;
  ui.question.value = '';
  void ask(question);
});
ui.question.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    ui.askForm.requestSubmit();
  }
});

ui.apiKey.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
ui.projectId.value = localStorage.getItem(PROJECT_STORAGE) ?? '';
setBadge(null);
void loadProjectOptions();
if (ui.projectId.value) void openProject();
