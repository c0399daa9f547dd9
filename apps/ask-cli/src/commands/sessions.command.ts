import { type Command, Option } from 'commander';
import { AskClient } from '@ask/ask-client';
import { count } from './plural';

/** One session of the list route (`GET /api/v1/projects/:projectId/sessions`, docs/API.md "Sessions"). */
export interface SessionListItem {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** Stored question/answer pairs (turns). */
  messageCount: number;
}

/**
 * The sessions as an aligned text table, newest first as the route gives them: id, turns, last
 * update (UTC, to the minute) and title; `no sessions` when there is none.
 */
export function formatSessions(sessions: SessionListItem[]): string {
  if (sessions.length === 0) return 'no sessions\n';
  const rows = sessions.map((s) => [
    s.id,
    count(s.messageCount, 'turn'),
    s.updatedAt.slice(0, 16).replace('T', ' '),
    s.title,
  ]);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell)).join('  '));
  return `${lines.join('\n')}\n${count(sessions.length, 'session')}\n`;
}

/** `ask sessions --project ID [--json]` over HTTP (defaults: $ASK_PROJECT, $ASK_GATEWAY, $ASK_API_KEY). */
export function registerSessionsCommand(program: Command): void {
  program
    .command('sessions')
    .description("list a project's sessions, newest first (GET /api/v1/projects/:projectId/sessions)")
    .addOption(new Option('--project <id>', 'project id').env('ASK_PROJECT').makeOptionMandatory())
    .option('--json', 'print the route body as JSON')
    .addOption(new Option('--gateway <url>', 'gateway base URL').env('ASK_GATEWAY').default('http://127.0.0.1:3000'))
    .addOption(new Option('--api-key <key>', 'project API key or admin key (Authorization: Bearer)').env('ASK_API_KEY'))
    .action(async (flags: { project: string; json?: boolean; gateway: string; apiKey?: string }) => {
      const body = await new AskClient(flags.gateway, flags.apiKey).request<{ sessions: SessionListItem[] }>(
        'GET',
        `/api/v1/projects/${encodeURIComponent(flags.project)}/sessions`,
      );
      process.stdout.write(flags.json ? `${JSON.stringify(body, null, 2)}\n` : formatSessions(body.sessions));
    });
}
