import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ServeStaticModule } from '@nestjs/serve-static';
import request from 'supertest';
import { dashboardStaticOptions } from './dashboard-static.module';

@Controller()
class ProbeController {
  @Get('api/v1/probe')
  probe() {
    return { ok: true };
  }

  @Get('health')
  health() {
    return { status: 'ok' };
  }
}

describe('dashboardStaticOptions', () => {
  let dist: string;

  beforeEach(() => {
    dist = mkdtempSync(join(tmpdir(), 'dashboard-dist-'));
  });

  afterEach(() => rmSync(dist, { recursive: true, force: true }));

  it('serves nothing (and the gateway boots) when the bundle has not been built', () => {
    expect(dashboardStaticOptions(join(dist, 'missing'))).toEqual([]);
  });

  describe('with a built bundle', () => {
    let app: INestApplication;

    beforeEach(async () => {
      writeFileSync(join(dist, 'index.html'), '<!doctype html><title>Ask dashboard</title>');
      mkdirSync(join(dist, 'assets'));
      writeFileSync(join(dist, 'assets', 'app.js'), 'console.log(1)');
      @Module({ imports: [ServeStaticModule.forRoot(...dashboardStaticOptions(dist))], controllers: [ProbeController] })
      class TestModule {}
      app = await NestFactory.create(TestModule, { logger: false });
      await app.init();
    });

    afterEach(() => app.close());

    it('serves index.html at / and the assets beside it', async () => {
      const page = await request(app.getHttpServer()).get('/').expect(200);
      expect(page.text).toContain('Ask dashboard');
      await request(app.getHttpServer()).get('/assets/app.js').expect(200);
    });

    it('leaves the API and health routes to their controllers', async () => {
      expect((await request(app.getHttpServer()).get('/api/v1/probe').expect(200)).body).toEqual({ ok: true });
      expect((await request(app.getHttpServer()).get('/health').expect(200)).body).toEqual({ status: 'ok' });
    });

    it('never answers an unknown API path with the page', async () => {
      const response = await request(app.getHttpServer()).get('/api/v1/nope');
      expect(response.status).toBe(404);
      expect(response.text).not.toContain('Ask dashboard');
      const metrics = await request(app.getHttpServer()).get('/metrics');
      expect(metrics.text).not.toContain('Ask dashboard');
    });
  });
});
