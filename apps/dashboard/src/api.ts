import type { BudgetEvent, DoneEvent, ErrorEvent, UsageTotals } from '@ask/ask-contracts';

/** A non-2xx answer of the API with its typed body (`{ error, code, details? }` plus the status). */
export class ApiError extends Error {
  constructor(readonly body: ErrorEvent) {
    super(`${body.status} ${body.code}: ${body.error}`);
    this.name = 'ApiError';
  }
}

export interface ProjectSummary {
  id: string;
  name: string;
}

export interface SessionSummary {
  id: string;
  title: string;
  updatedAt: string;
  messageCount: number;
}

export interface StoredMessage {
  id: string;
  askId: string;
  question: string;
  answer: string;
  /** Prompt / completion tokens the provider reported for the answer (null when it reported none). */
  promptTokens: number | null;
  completionTokens: number | null;
  model: string | null;
  /** The budget event the answer was planned under; null for answers stored before it was kept. */
  budget: BudgetEvent | null;
  sources: DoneEvent['sources'];
}

export interface SessionWithMessages extends SessionSummary {
  messages: StoredMessage[];
}

/** Token sums and exact cost of a set of `provider_calls` rows (docs/telemetry.md): the usage routes' shape. */
export type UsageFigures = UsageTotals;

/** `GET …/usage?groupBy=…`: `key` is a UTC date (`day`), `provider/model` (`model`) or a session id. */
export interface ProjectUsage {
  from: string;
  to: string;
  groupBy: 'day' | 'model' | 'session';
  groups: Array<UsageFigures & { key: string }>;
  totals: UsageFigures;
}

/** `GET …/sessions/:sessionId/usage` (the gateway's `SessionUsageDto`): the session's calls by ask. */
export interface SessionUsage {
  sessionId: string;
  asks: Array<UsageFigures & { askId: string }>;
  totals: UsageFigures;
}

export interface AskAccepted {
  askId: string;
  sessionId: string;
  /** Open exactly this URL with EventSource: it may carry the ask's `?token=` capability. */
  eventsUrl: string;
}

/**
 * True for a project API key: `ask_<12-character prefix>_<43-character secret>`, base64url (the form
 * ApiKeysRepository in libs/persistence issues). The admin key is the operator's ASK_ADMIN_KEY, of any
 * other form.
 */
export function isProjectKey(key: string): boolean {
  return /^ask_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/.test(key);
}

/**
 * The few routes the dashboard calls, on the page's own origin. The API key, when one is given, goes
 * in `Authorization: Bearer`; EventSource cannot send headers, which is why `eventsUrl` is opened as
 * returned.
 */
export class DashboardApi {
  constructor(private readonly apiKey: () => string) {}

  /**
   * `GET /api/v1/projects` (admin key only). Null when this key may not list projects; a project key
   * ({@link isProjectKey}) or no key is never sent there, so the page logs no 401 for it.
   */
  async listProjects(): Promise<ProjectSummary[] | null> {
    const key = this.apiKey().trim();
    if (!key || isProjectKey(key)) return null;
    try {
      const body = await this.request<{ projects: ProjectSummary[] }>('GET', '/api/v1/projects');
      return body.projects;
    } catch (err) {
      if (err instanceof ApiError && [401, 403, 404].includes(err.body.status)) return null;
      throw err;
    }
  }

  listSessions(projectId: string): Promise<SessionSummary[]> {
    return this.request<{ sessions: SessionSummary[] }>('GET', `${projectPath(projectId)}/sessions`).then(
      (b) => b.sessions,
    );
  }

  getSession(projectId: string, sessionId: string): Promise<SessionWithMessages> {
    return this.request('GET', `${projectPath(projectId)}/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** The session's tokens and cost by ask, summed from its stored calls. */
  getSessionUsage(projectId: string, sessionId: string): Promise<SessionUsage> {
    return this.request('GET', `${projectPath(projectId)}/sessions/${encodeURIComponent(sessionId)}/usage`);
  }

  /** The project's tokens and cost over the API's default range (the 30 days before now). */
  getUsage(projectId: string, groupBy: 'day' | 'model'): Promise<ProjectUsage> {
    return this.request('GET', `${projectPath(projectId)}/usage?groupBy=${groupBy}`);
  }

  async deleteSession(projectId: string, sessionId: string): Promise<void> {
    await this.request('DELETE', `${projectPath(projectId)}/sessions/${encodeURIComponent(sessionId)}`);
  }

  ask(projectId: string, question: string, sessionId: string | null): Promise<AskAccepted> {
    return this.request('POST', `${projectPath(projectId)}/ask`, sessionId ? { question, sessionId } : { question });
  }

  /** @throws ApiError on a non-2xx answer (a body that is not ours becomes `internal_error`). */
  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const key = this.apiKey().trim();
    if (key) headers['authorization'] = `Bearer ${key}`;
    let response: Response;
    try {
      response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new ApiError({
        status: 0,
        code: 'internal_error',
        error: 'the gateway could not be reached',
        details: String(err),
      });
    }
    const text = await response.text();
    if (!response.ok) throw new ApiError(errorBody(response.status, text));
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

function projectPath(projectId: string): string {
  return `/api/v1/projects/${encodeURIComponent(projectId)}`;
}

/** The typed error of a failed response; anything else (a proxy's HTML page) becomes `internal_error`. */
export function errorBody(status: number, text: string): ErrorEvent {
  try {
    const parsed = JSON.parse(text) as Partial<ErrorEvent>;
    if (typeof parsed.code === 'string') {
      return { status, code: parsed.code, error: String(parsed.error ?? ''), details: parsed.details };
    }
  } catch {
    // not JSON
  }
  return {
    status,
    code: 'internal_error',
    error: `unexpected response (HTTP ${status})`,
    details: text.slice(0, 500) || undefined,
  };
}
