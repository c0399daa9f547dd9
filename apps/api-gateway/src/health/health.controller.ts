import { Controller, Get, Header, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { EVENTS_REDIS, type RedisClient, pingMasters } from '@ask/event-stream';
import { registry } from '@ask/observability';
import { Public } from '../auth/access.decorators';

/** Liveness/readiness and Prometheus metrics of the gateway; open without a key. */
@Controller()
@Public()
export class HealthController {
  constructor(
    private readonly db: DataSource,
    @Inject(EVENTS_REDIS) private readonly redis: RedisClient,
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

  /** Prometheus text format. */
  @Get('metrics')
  @Header('content-type', registry.contentType)
  metrics(): Promise<string> {
    return registry.metrics();
  }
}
