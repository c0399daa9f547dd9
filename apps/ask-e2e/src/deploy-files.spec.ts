// docker-compose.yml and the Dockerfile, checked as far as a machine without a Docker engine allows:
// the compose file parsed as YAML (anchors and merges resolved) and compared with the apps, their
// build outputs and libs/config; the Dockerfile's stages read as text. The built apps booting against
// a fresh database is built-output.spec.ts (the same `node dist/<app>/main.js` commands).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@ask/config';
import { APPS } from '@ask/stack';

const ROOT = resolve(__dirname, '..', '..', '..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const dockerfile = read('Dockerfile');

/** Compose's `${VAR:-default}`, `${VAR:?message}` and `${VAR}` with nothing set: the default, a stand-in for a required secret, or empty. */
function interpolate(value: string): string {
  return String(value).replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) =>
    op === '-' ? (arg ?? '') : op === '?' ? `${name.toLowerCase()}-set-by-the-operator-0123456789abcdef` : '',
  );
}

/** The settings libs/config reads: the keys of its schema (`  NAME: z…` lines of config.ts). */
const CONFIG_KEYS = new Set(
  [...read('libs/config/src/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1]),
);

/** Each app's health port setting (the gateway's is its HTTP port). */
const PORT_SETTING: Record<(typeof APPS)[number], string> = {
  'api-gateway': 'GATEWAY_PORT',
  'retrieval-worker': 'RETRIEVAL_HEALTH_PORT',
  'synthesis-worker': 'SYNTHESIS_HEALTH_PORT',
  'ingestion-worker': 'INGESTION_HEALTH_PORT',
};

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, Redis, the one-shot migration and each of the four apps', () => {
    expect(Object.keys(services).sort()).toEqual(['migrate', 'postgres', 'redis', ...APPS].sort());
  });

  it("starts each app with its built entry point, the one its build writes (dist/<app>/main.js, persistence's dist/migrate)", () => {
    for (const app of APPS) {
      expect([app, services[app].command]).toEqual([app, ['node', `dist/${app}/main.js`]]);
      expect(JSON.parse(read(`apps/${app}/project.json`)).targets.build).toBeDefined();
    }
    expect(services['migrate'].command).toEqual(['node', 'dist/migrate/main.js']);
    expect(JSON.parse(read('libs/persistence/project.json')).targets.build.outputs).toEqual([
      '{workspaceRoot}/dist/migrate',
    ]);
  });

  it('sets only settings libs/config knows, and each app boots on them (loadConfig accepts them)', () => {
    expect(CONFIG_KEYS.size).toBeGreaterThan(30);
    for (const name of ['migrate', ...APPS]) {
      const env = Object.fromEntries(
        Object.entries(services[name].environment ?? {}).map(([k, v]) => [k, interpolate(v)]),
      );
      expect([name, Object.keys(env).filter((k) => !CONFIG_KEYS.has(k))]).toEqual([name, []]);
      const config = loadConfig(env);
      expect([name, config.DATABASE_URL, config.REDIS_URL]).toEqual([
        name,
        'postgres://postgres:postgres@postgres:5432/ask',
        'redis://redis:6379/0',
      ]);
    }
  });

  it('refuses to start without the three secrets (`${VAR:?…}`), never with a default', () => {
    for (const secret of ['ASK_ADMIN_KEY', 'ASK_EVENTS_SECRET', 'ASK_ENCRYPTION_KEY'])
      expect([secret, services['api-gateway'].environment?.[secret]]).toEqual([
        secret,
        expect.stringMatching(new RegExp(`^\\$\\{${secret}:\\?`)),
      ]);
  });

  it("checks each app's health on the port its settings give it, and the image exposes every one", () => {
    const exposed = /^EXPOSE (.+)$/m.exec(dockerfile)?.[1].split(/\s+/) ?? [];
    for (const app of APPS) {
      const port = interpolate(services[app].environment?.[PORT_SETTING[app]] ?? '');
      expect([app, port]).toEqual([app, expect.stringMatching(/^\d+$/)]);
      expect([app, services[app].healthcheck?.test.join(' ')]).toEqual([
        app,
        expect.stringContaining(`http://127.0.0.1:${port}/health`),
      ]);
      expect([app, exposed.includes(port)]).toEqual([app, true]);
    }
    expect(services['api-gateway'].ports?.map(interpolate)).toEqual(['3000:3000']);
    expect(services['api-gateway'].environment?.['GATEWAY_HOST']).toBe('0.0.0.0');
  });

  it('starts every app after the migration has completed and PostgreSQL and Redis are healthy', () => {
    for (const app of APPS)
      expect([app, services[app].depends_on]).toEqual([
        app,
        {
          postgres: { condition: 'service_healthy' },
          redis: { condition: 'service_healthy' },
          migrate: { condition: 'service_completed_successfully' },
        },
      ]);
  });

  it('runs Redis with the append-only file and noeviction (docs/ARCHITECTURE.md "Persistence")', () => {
    const command = services['redis'].command?.join(' ') ?? '';
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--maxmemory-policy noeviction');
  });

  it("publishes PostgreSQL on loopback only, off a local server's 5432, for the CLI's offline paths", () => {
    expect(services['postgres'].ports?.map(interpolate)).toEqual(['127.0.0.1:5433:5432']);
    expect(services['postgres'].image).toMatch(/^pgvector\/pgvector:pg15$/);
  });
});

describe('Dockerfile', () => {
  const stages = dockerfile.split(/^(?=FROM )/m).filter((s) => s.startsWith('FROM '));
  const stage = (name: string) => stages.find((s) => new RegExp(`^FROM \\S+ AS ${name}$`, 'm').test(s)) ?? '';

  it('builds in three stages on the Node major that package.json engines accept', () => {
    expect(stages.map((s) => /^FROM (\S+)(?: AS (\w+))?/.exec(s)?.slice(1, 3))).toEqual([
      ['node:20-bookworm-slim', 'build'],
      ['node:20-bookworm-slim', 'deps'],
      ['node:20-bookworm-slim', undefined],
    ]);
    expect(JSON.parse(read('package.json')).engines.node).toMatch(/^>=20\./);
  });

  it('builds every app and the migration runner in the build stage', () => {
    const projects = /nx run-many -t build -p ([^\\\n]+)/.exec(stage('build'))?.[1].trim().split(/\s+/);
    expect(projects?.sort()).toEqual([...APPS, 'persistence'].sort());
  });

  it('installs only production dependencies for the image (npm ci --omit=dev) and ships them with dist/', () => {
    expect(stage('deps')).toMatch(/^RUN npm ci --omit=dev /m);
    const final = stages[stages.length - 1];
    expect(final).toContain('COPY --from=deps /app/node_modules ./node_modules');
    expect(final).toContain('COPY --from=build /app/dist ./dist');
    expect(final).not.toMatch(/COPY (?!--from)/);
    expect(final).toMatch(/^USER node$/m);
    expect(final).toContain('CMD ["sh", "-c", "exec node \\"dist/${APP}/main.js\\""]');
  });

  it('ships only the tokenizer families TOKENIZERS names (default all), pruned after npm ci --omit=dev', () => {
    expect(stage('deps')).toMatch(/^ARG TOKENIZERS=all$/m);
    // The script at its repository path, relative to the stage's WORKDIR (no machine's absolute path).
    const script = 'tools/build/prune-tokenizers.sh';
    expect(existsSync(resolve(ROOT, script))).toBe(true);
    expect(stage('deps')).toContain(`COPY ${script} ${script}`);
    expect(stage('deps')).toContain(`sh ${script} node_modules "$TOKENIZERS"`);
  });
});

describe('tools/build/prune-tokenizers.sh', () => {
  const FAMILIES = ['claude', 'deepseek_v3', 'gemini', 'gemma3', 'gptoss', 'llama3', 'qwen3'];
  let modules: string;
  const prune = (keep: string) => {
    rmSync(modules, { recursive: true, force: true });
    for (const f of [...FAMILIES.map((f) => `tokenizer-${f}`), 'tokenizers'])
      mkdirSync(join(modules, '@lenml', f, 'models'), { recursive: true });
    const run = spawnSync('sh', [resolve(ROOT, 'tools', 'build', 'prune-tokenizers.sh'), modules, keep], {
      encoding: 'utf8',
    });
    return { code: run.status, stderr: run.stderr, left: readdirSync(join(modules, '@lenml')).sort() };
  };

  beforeAll(() => {
    modules = join(mkdtempSync(join(tmpdir(), 'prune-tokenizers-')), 'node_modules');
  });
  afterAll(() => rmSync(resolve(modules, '..'), { recursive: true, force: true }));

  it.each([
    ['all', [...FAMILIES.map((f) => `tokenizer-${f}`), 'tokenizers']],
    ['llama3 qwen3', ['tokenizer-llama3', 'tokenizer-qwen3', 'tokenizers']],
    ['none', ['tokenizers']],
  ])('TOKENIZERS=%s keeps %j', (keep, left) => {
    expect(prune(keep)).toEqual({ code: 0, stderr: '', left: [...left].sort() });
  });

  it('fails on an unknown family and removes nothing', () => {
    const run = prune('llama3 llama4');
    expect([run.code, run.left.length]).toEqual([1, FAMILIES.length + 1]);
    expect(run.stderr).toContain("no tokenizer family 'llama4'");
  });
});
