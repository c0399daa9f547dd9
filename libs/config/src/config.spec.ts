import { ConfigError, loadConfig } from './config';

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
    expect(() => loadConfig({ GATEWAY_PORT: '70000', REDIS_URL: 'nope' })).toThrow(/GATEWAY_PORT[\s\S]*REDIS_URL|REDIS_URL[\s\S]*GATEWAY_PORT/);
  });
});
