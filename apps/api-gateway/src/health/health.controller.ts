import { Controller, Get, Header, Headers, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { unauthorized } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { EVENTS_REDIS, type RedisClient, pingMasters } from '@ask/event-stream';
import { metricsAuthorized, registry } from '@ask/observability';
import { Public } from '../auth/access.decorators';

/**
 * Liveness/readiness and Prometheus metrics of the gateway; open without a project key. `/metrics`
 * asks for `Authorization: Bearer <ASK_METRICS_TOKEN>` when the operator set that token.
 */
@Controller()
@Public()
export class HealthController {
  constructor(
    private readonly db: DataSource,
    @Inject(EVENTS_REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * 200 `{status:"ok"}` when PostgreSQL and Redis answer; 503 naming the failing ones otherwise. The
   * 200 carries this process's id in {@link PROCESS_ID_HEADER}, so the stack knows its own gateway answered.
   */
  @Get('health')
  @Header(PROCESS_ID_HEADER, String(process.pid))
  async health(): Promise<{ status: string }> {
    const failing: string[] = [];
    await Promise.all([
      this.db.query('SELECT 1').catch(() => failing.push('postgres')),
      pingMasters(this.redis).catch(() => failing.push('redis')),
    ]);
    if (failing.length) {
      throw new HttpException({ message: `unavailable: ${failing.sort().join(', ')}` }, HttpStatus.SERVICE_UNAVAILABLE);
    }
    return { status: 'ok' };
  }

  /**
   * Prometheus text format. @throws AskError 401 `unauthorized` when ASK_METRICS_TOKEN is set and the
   * request does not carry it as a bearer token (compared in constant time).
   */
  @Get('metrics')
  @Header('content-type', registry.contentType)
  metrics(@Headers('authorization') authorization: string | undefined): Promise<string> {
    if (!metricsAuthorized(authorization, this.config.ASK_METRICS_TOKEN))
      throw unauthorized('/metrics: the operator requires ASK_METRICS_TOKEN in the Authorization header');
    return registry.metrics();
  }
}
