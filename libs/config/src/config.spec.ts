import { Test } from '@nestjs/testing';
import { appConfig, ConfigError, loadConfig } from './config';
import { APP_CONFIG, AppConfigModule } from './config.module';

describe('loadConfig', () => {
  it('fills the development defaults', () => {
    const config = loadConfig({});
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/ask');
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:6379/0');
    expect(config.GATEWAY_PORT).toBe(3000);
    expect(config.ASK_KEY_PREFIX).toBe('ask-service');
  });

  it('coerces numbers from strings', () => {
    expect(loadConfig({ GATEWAY_PORT: '8080', SYNTHESIS_CONCURRENCY: '3' })).toMatchObject({
      GATEWAY_PORT: 8080,
      SYNTHESIS_CONCURRENCY: 3,
    });
  });

  it('names every invalid variable', () => {
    expect(() => loadConfig({ GATEWAY_PORT: '70000', REDIS_URL: 'nope' })).toThrow(ConfigError);
    expect(() => loadConfig({ GATEWAY_PORT: '70000', REDIS_URL: 'nope' })).toThrow(
      /GATEWAY_PORT[\s\S]*REDIS_URL|REDIS_URL[\s\S]*GATEWAY_PORT/,
    );
  });

  it('takes a synthesis job over within lock + stalled check: 6 s lock renewed every 2 s, checks every 2 s', () => {
    expect(loadConfig({})).toMatchObject({
      SYNTHESIS_LOCK_DURATION_MS: 6_000,
      SYNTHESIS_LOCK_RENEW_MS: 2_000,
      SYNTHESIS_STALLED_INTERVAL_MS: 2_000,
    });
    expect(loadConfig({ SYNTHESIS_LOCK_DURATION_MS: '3000' }).SYNTHESIS_LOCK_RENEW_MS).toBe(1_000);
    expect(() => loadConfig({ SYNTHESIS_LOCK_DURATION_MS: '3000', SYNTHESIS_LOCK_RENEW_MS: '3000' })).toThrow(
      /SYNTHESIS_LOCK_RENEW_MS: must be below SYNTHESIS_LOCK_DURATION_MS/,
    );
  });

  it('sizes the PostgreSQL pool per process: 10 connections, 10 s to get one, both settings', () => {
    expect(loadConfig({})).toMatchObject({ DATABASE_POOL_MAX: 10, DATABASE_CONNECT_TIMEOUT_MS: 10_000 });
    expect(loadConfig({ DATABASE_POOL_MAX: '4', DATABASE_CONNECT_TIMEOUT_MS: '0' })).toMatchObject({
      DATABASE_POOL_MAX: 4,
      DATABASE_CONNECT_TIMEOUT_MS: 0,
    });
    expect(() => loadConfig({ DATABASE_POOL_MAX: '0' })).toThrow(/DATABASE_POOL_MAX/);
  });

  it('listens on loopback unless GATEWAY_HOST says otherwise', () => {
    expect(loadConfig({}).GATEWAY_HOST).toBe('127.0.0.1');
    expect(loadConfig({ GATEWAY_HOST: '0.0.0.0' }).GATEWAY_HOST).toBe('0.0.0.0');
  });

  it("binds the workers' health ports to loopback unless WORKER_HEALTH_HOST says otherwise", () => {
    expect(loadConfig({}).WORKER_HEALTH_HOST).toBe('127.0.0.1');
    expect(loadConfig({ WORKER_HEALTH_HOST: '0.0.0.0' }).WORKER_HEALTH_HOST).toBe('0.0.0.0');
  });

  it('leaves /metrics open unless ASK_METRICS_TOKEN is set, and refuses a token under 16 characters', () => {
    expect(loadConfig({}).ASK_METRICS_TOKEN).toBeUndefined();
    expect(loadConfig({ ASK_METRICS_TOKEN: 'm'.repeat(16) }).ASK_METRICS_TOKEN).toBe('m'.repeat(16));
    expect(() => loadConfig({ ASK_METRICS_TOKEN: 'short' })).toThrow(/ASK_METRICS_TOKEN/);
  });

  it('parses the provider allow-list into origins and path prefixes', () => {
    const config = loadConfig({
      ASK_PROVIDER_URL_ALLOWLIST: 'http://127.0.0.1:11434, https://LLM.example.com:443/v1/ http://ollama:11434',
    });
    expect(config.ASK_PROVIDER_URL_ALLOWLIST).toEqual([
      { origin: 'http://127.0.0.1:11434', pathPrefix: '' },
      { origin: 'https://llm.example.com', pathPrefix: '/v1' },
      { origin: 'http://ollama:11434', pathPrefix: '' },
    ]);
    expect(loadConfig({}).ASK_PROVIDER_URL_ALLOWLIST).toEqual([]);
  });

  it.each([
    ['ftp://files.example.com', /only http and https/],
    ['http://user:pw@llm.example.com', /user-info/],
    ['https://llm.example.com/v1#x', /query or fragment/],
    ['llm.example.com', /is not a URL/],
  ])('refuses the allow-list entry %s, naming the variable', (entry, reason) => {
    expect(() => loadConfig({ ASK_PROVIDER_URL_ALLOWLIST: entry })).toThrow(/ASK_PROVIDER_URL_ALLOWLIST/);
    expect(() => loadConfig({ ASK_PROVIDER_URL_ALLOWLIST: entry })).toThrow(reason);
  });

  it('parses fixed provider host addresses and refuses a non-IP address', () => {
    expect(
      loadConfig({ ASK_PROVIDER_RESOLVE: 'llm.corp.example=10.1.2.3|[2001:db8::5], Other.Example.=1.2.3.4' })
        .ASK_PROVIDER_RESOLVE,
    ).toEqual([
      { host: 'llm.corp.example', addresses: ['10.1.2.3', '2001:db8::5'] },
      { host: 'other.example', addresses: ['1.2.3.4'] },
    ]);
    expect(() => loadConfig({ ASK_PROVIDER_RESOLVE: 'llm.corp.example=not-an-ip' })).toThrow(
      /ASK_PROVIDER_RESOLVE[\s\S]*not an IP address/,
    );
  });

  it('keeps tracing off unless the operator turns it on, and checks the collector URL', () => {
    expect(loadConfig({})).toMatchObject({ ASK_TRACING: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' });
    expect(
      loadConfig({
        ASK_TRACING: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      }),
    ).toMatchObject({
      ASK_TRACING: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_BSP_SCHEDULE_DELAY: 200,
    });
    expect(() => loadConfig({ ASK_TRACING: 'on' })).toThrow(/ASK_TRACING/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:pw@collector' })).toThrow(/user-info/);
  });

  describe('Redis Cluster', () => {
    it('parses REDIS_CLUSTER_NODES and spreads the streams over 16 hash tags unless told', () => {
      const config = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001 [::1]:7002' });
      expect([config.REDIS_CLUSTER_NODES, config.ASK_STREAM_HASH_TAGS]).toEqual([
        [
          { host: '10.0.0.1', port: 7000 },
          { host: 'redis-b', port: 7001 },
          { host: '::1', port: 7002 },
        ],
        16,
      ]);
      expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:1', ASK_STREAM_HASH_TAGS: '4' }).ASK_STREAM_HASH_TAGS).toBe(4);
      expect([loadConfig({}).REDIS_CLUSTER_NODES, loadConfig({}).ASK_STREAM_HASH_TAGS]).toEqual([undefined, 0]);
    });

    it('refuses a node without a port, and untagged streams on a Cluster', () => {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:7000,b' })).toThrow(
        /REDIS_CLUSTER_NODES: "b" is not host:port/,
      );
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:7000', ASK_STREAM_HASH_TAGS: '0' })).toThrow(
        /ASK_STREAM_HASH_TAGS: must be at least 1 with REDIS_CLUSTER_NODES/,
      );
    });

    it('accepts one {hash tag} in ASK_KEY_PREFIX, not nested or empty ones', () => {
      expect(loadConfig({ ASK_KEY_PREFIX: '{ask}' }).ASK_KEY_PREFIX).toBe('{ask}');
      expect(loadConfig({ ASK_KEY_PREFIX: 'prod:{ask}:v2' }).ASK_KEY_PREFIX).toBe('prod:{ask}:v2');
      for (const bad of ['{}', '{{ask}}', '{ask', 'a}{b', '{a}{b}'])
        expect(() => loadConfig({ ASK_KEY_PREFIX: bad })).toThrow(/ASK_KEY_PREFIX/);
    });
  });
});

describe(appConfig.name, () => {
  it('parses the environment once: every call, and the config AppConfigModule injects, are one object', async () => {
    const first = appConfig();
    expect(appConfig()).toBe(first);
    const moduleRef = await Test.createTestingModule({ imports: [AppConfigModule] }).compile();
    expect(moduleRef.get(APP_CONFIG)).toBe(first);
    await moduleRef.close();
  });
});
