import { type Command, Option } from 'commander';
import { AskClient } from '@ask/ask-client';
import type { UsageGroup, UsageGroupBy, UsageTotals } from '@ask/persistence';
import { count } from './plural';

/** The usage route's body (`GET /api/v1/projects/:projectId/usage`): token sums and exact cost per group, then in total. */
export interface UsageSummary {
  from: string;
  to: string;
  groupBy: UsageGroupBy;
  groups: UsageGroup[];
  totals: UsageTotals;
}

/**
 * The summary as an aligned text table: one row per group then `total`, tokens as integers, cost as
 * the route's exact decimal (never re-rounded), and a note of calls without a price.
 */
export function formatUsage(summary: UsageSummary): string {
  const head = [summary.groupBy, 'calls', 'input', 'cache_read', 'cache_write', 'output', 'reasoning', 'cost_usd'];
  const row = (key: string, f: UsageTotals) =>
    [
      key || '(none)',
      f.calls,
      f.inputTokens,
      f.cacheReadTokens,
      f.cacheWriteTokens,
      f.outputTokens,
      f.reasoningTokens,
      f.costUsd,
    ].map(String);
  const rows = [head, ...summary.groups.map((g) => row(g.key, g)), row('total', summary.totals)];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '),
  );
  const note = summary.totals.unpricedCalls
    ? `\n${count(summary.totals.unpricedCalls, 'call')} without a price: their tokens are counted, their cost is not`
    : '';
  return `usage ${summary.from} → ${summary.to}\n${lines.join('\n')}${note}\n`;
}

/** `ask usage --project ID [--from DATE] [--to DATE] [--group-by day|model|session] [--json]` over HTTP. */
export function registerUsageCommand(program: Command): void {
  program
    .command('usage')
    .description("a project's tokens and cost per day, model or session (GET /api/v1/projects/:projectId/usage)")
    .requiredOption('--project <id>', 'project id')
    .option('--from <date>', 'ISO date or date-time, inclusive (default: 30 days before --to)')
    .option('--to <date>', 'ISO date or date-time, exclusive (default: now)')
    .addOption(new Option('--group-by <by>', 'grouping').choices(['day', 'model', 'session']).default('day'))
    .option('--json', 'print the route body as JSON')
    .addOption(new Option('--gateway <url>', 'gateway base URL').env('ASK_GATEWAY').default('http://127.0.0.1:3000'))
    .addOption(new Option('--api-key <key>', 'project API key or admin key (Authorization: Bearer)').env('ASK_API_KEY'))
    .action(
      async (flags: {
        project: string;
        from?: string;
        to?: string;
        groupBy: string;
        json?: boolean;
        gateway: string;
        apiKey?: string;
      }) => {
        const query = new URLSearchParams({ groupBy: flags.groupBy });
        if (flags.from) query.set('from', flags.from);
        if (flags.to) query.set('to', flags.to);
        const summary = await new AskClient(flags.gateway, flags.apiKey).request<UsageSummary>(
          'GET',
          `/api/v1/projects/${encodeURIComponent(flags.project)}/usage?${query}`,
        );
        process.stdout.write(flags.json ? `${JSON.stringify(summary, null, 2)}\n` : formatUsage(summary));
      },
    );
}
