import { Controller, Get, Param, Query } from '@nestjs/common';
import { invalidRequest, notFound } from '@ask/ask-errors';
import { ProjectsRepository, ProviderCallsRepository, type UsageGroupBy } from '@ask/persistence';
import { uuidParam } from '../errors/params';

const GROUP_BY: readonly UsageGroupBy[] = ['day', 'model', 'session'];
/** Default range when `from` is omitted: the 30 days before `to`. */
const DEFAULT_DAYS = 30;
/** Longest range one call may sum, in days (the summary is one indexed scan of the range). */
const MAX_DAYS = 366;
const DAY_MS = 86_400_000;

/**
 * An ISO 8601 date or date-time (a date alone is midnight UTC). The calendar date must exist:
 * `2026-02-30` is a 400, not rolled over to March 2 as `Date` would (a silently different range).
 * @throws AskError 400 naming the field.
 */
function parseInstant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.exec(value);
  if (!match) throw invalidRequest(`${name}: must be an ISO 8601 date or date-time`);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const calendar = new Date(0);
  calendar.setUTCFullYear(year, month - 1, day); // Date.UTC would read years 0–99 as 1900–1999
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day)
    throw invalidRequest(`${name}: ${match[1]}-${match[2]}-${match[3]} is not a calendar date`);
  const date = match[4] === undefined ? calendar : new Date(value);
  if (Number.isNaN(date.getTime())) throw invalidRequest(`${name}: must be an ISO 8601 date or date-time`);
  return date;
}

/**
 * A project's token usage and cost from `provider_calls`: one row per upstream
 * call, summed in SQL so each group is exactly its rows.
 */
@Controller('api/v1/projects/:projectId/usage')
export class UsageController {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly calls: ProviderCallsRepository,
  ) {}

  /**
   * `GET /api/v1/projects/:projectId/usage?from&to&groupBy=day|model|session` → 200
   * `{ from, to, groupBy, groups: [{ key, calls, inputTokens, cacheReadTokens, cacheWriteTokens,
   * outputTokens, reasoningTokens, costUsd, unpricedCalls }], totals }`. `from` inclusive, `to`
   * exclusive (default now, and 30 days before it); tokens in the OpenTelemetry buckets (input
   * includes cache read and write, output includes reasoning); `costUsd` an exact decimal string.
   * @throws AskError 400 for a bad date, `from` not before `to`, a range over 366 days or an unknown
   *   `groupBy`; 404 for an unknown project.
   */
  @Get()
  async summary(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Query('from') fromText?: string,
    @Query('to') toText?: string,
    @Query('groupBy') groupByText?: string,
  ) {
    const groupBy = (groupByText ?? 'day') as UsageGroupBy;
    if (!GROUP_BY.includes(groupBy)) throw invalidRequest(`groupBy: must be one of ${GROUP_BY.join(', ')}`);
    const to = parseInstant('to', toText) ?? new Date();
    const from = parseInstant('from', fromText) ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
    if (from.getTime() >= to.getTime()) throw invalidRequest('from: must be before to');
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS)
      throw invalidRequest(`from, to: at most ${MAX_DAYS} days apart`);
    if (!(await this.projects.findById(projectId))) throw notFound('project not found');
    const { groups, totals } = await this.calls.summarise(projectId, { from, to }, groupBy);
    return { from: from.toISOString(), to: to.toISOString(), groupBy, groups, totals };
  }
}
