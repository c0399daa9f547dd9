import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { AskApiError } from '@ask/ask-client';
import { FAKE_ANSWER, type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import type { ProjectSettingsInput } from '@ask/persistence';
import { follow } from '../faults/fixture';
import { type Canary, startCanary, startTrustStack, type TrustStack } from './trust-stack';

/** A name that the apps' static resolver (ASK_PROVIDER_RESOLVE) answers with loopback: DNS that points inside. */
const REBIND_HOST = 'rebind.ask-trust.example';
/** A name that resolves to a public address: a legitimate endpoint outside the allow-list. */
const PUBLIC_HOST = 'llm.ask-trust.example';
const LOCAL_LLM = { provider: 'local', model: 'local' } as const;
const LOCAL_EMBEDDING = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;
const STORED_KEY = 'sk-proj-STORED-9d1c4b7e2a6f8c0e3b5d7a9c1e4f6b8d';

type Field = 'llm.baseUrl' | 'embedding.baseUrl';

/** A settings body (PATCH) or stored settings that point one provider at `url`. */
function pointing(field: Field, url: string): { llm?: Record<string, unknown>; embedding?: Record<string, unknown> } {
  return field === 'llm.baseUrl'
    ? { llm: { provider: 'openai', model: 'gpt-4o', baseUrl: url } }
    : { embedding: { provider: 'openai', model: 'text-embedding-3-small', dimensions: 256, baseUrl: url } };
}

function stored(field: Field, url: string): ProjectSettingsInput {
  const body = pointing(field, url);
  return {
    llmSettings: (body.llm ?? LOCAL_LLM) as never,
    embeddingSettings: (body.embedding ?? LOCAL_EMBEDDING) as never,
    topK: 4,
  };
}

/**
 * SSRF suite against the four apps as processes (real PostgreSQL and Redis): no key can point the
 * service at an internal address. Every internal address form is refused on PATCH (project key and
 * admin key, `llm.baseUrl` and `embedding.baseUrl`) with a typed 400 or 403 naming the field; settings
 * already stored with such an address (written before the policy, or a DNS answer that changed) are
 * refused by the workers at connect time with the typed 403 naming the field; a redirect from the
 * allow-listed fake upstream to an internal address is not followed. A canary server on loopback (its
 * own port, on 127.0.0.1 and ::1) is the target of every loopback form and sees zero connections,
 * while the allow-listed fake upstream still answers asks and embeds knowledge.
 */
describe('SSRF: provider endpoints are an operator decision (gateway and workers as processes)', () => {
  let t: TrustStack;
  let canary: Canary;
  let upstream: FakeUpstream;
  let other: FakeUpstream;
  let target: { id: string; key: string };

  /** Loopback forms aimed at the canary (a connection would be counted), then forms no test can listen on. */
  const internal = (): Array<[string, string]> => {
    const c = canary.port;
    return [
      ['IPv4 loopback', `http://127.0.0.1:${c}/v1`],
      ['IPv4 unspecified (connects to loopback)', `http://0.0.0.0:${c}/v1`],
      ['IPv6 loopback', `http://[::1]:${c}/v1`],
      ['decimal IPv4 (2130706433)', `http://2130706433:${c}/v1`],
      ['octal IPv4 (0177.0.0.1)', `http://0177.0.0.1:${c}/v1`],
      ['hex IPv4 (0x7f.0.0.1)', `http://0x7f.0.0.1:${c}/v1`],
      ['IPv4-mapped IPv6 (::ffff:127.0.0.1)', `http://[::ffff:127.0.0.1]:${c}/v1`],
      ['localhost', `http://localhost:${c}/v1`],
      ['a *.localhost name', `http://api.localhost:${c}/v1`],
      ['a DNS name resolving to loopback', `http://${REBIND_HOST}:${c}/v1`],
      ['cloud metadata 169.254.169.254', 'http://169.254.169.254/latest/meta-data/'],
      ['IPv4 private 10.0.0.1', 'http://10.0.0.1/v1'],
      ['IPv4 private 192.168.1.10', 'http://192.168.1.10/v1'],
      ['IPv4 link-local 169.254.10.10', 'http://169.254.10.10/v1'],
      ['IPv6 link-local fe80::1', 'http://[fe80::1]/v1'],
      ['IPv6 unique-local fc00::1', 'http://[fc00::1]/v1'],
      ['IPv6 unique-local fd00:ec2::254 (metadata)', 'http://[fd00:ec2::254]/latest/meta-data/'],
    ];
  };

  beforeAll(async () => {
    [canary, upstream, other] = await Promise.all([
      startCanary(),
      startFakeUpstream({ chunkDelayMs: 0 }),
      startFakeUpstream({ chunkDelayMs: 0 }),
    ]);
    t = await startTrustStack('ssrf', {
      // The operator allow-lists the two fake upstreams (loopback, so refused otherwise), not the canary.
      ASK_PROVIDER_URL_ALLOWLIST: `${upstream.url},${other.url}`,
      ASK_PROVIDER_RESOLVE: `${REBIND_HOST}=127.0.0.1,${PUBLIC_HOST}=93.184.215.14`,
      // Room for a first ask that loads a bundled tokenizer (Llama 3's for Ollama) on a loaded machine:
      // a refusal that comes after the deadline would be reported as the deadline's 504.
      ASK_DEADLINE_MS: '90000',
    });
    // The issue's repro: the admin stored an OpenAI key; the project key then tries to aim it elsewhere.
    target = await t.project('target', stored('llm.baseUrl', `${upstream.url}/v1`), { apiKey: STORED_KEY });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([canary?.close(), upstream?.close(), other?.close()]);
  });

  const patch = (key: string, body: unknown, id = target.id) =>
    t.call('PATCH', `/api/v1/projects/${id}`, { key, json: body });

  describe('on PATCH (save time)', () => {
    /** What each refusal answered: `status code details-prefix` for every form, field and key. */
    const answers = async (forms: Array<[string, string]>) => {
      const out: Record<string, string> = {};
      for (const [name, url] of forms) {
        for (const field of ['llm.baseUrl', 'embedding.baseUrl'] as const) {
          for (const [who, key] of [
            ['project', target.key],
            ['admin', t.adminKey],
          ] as const) {
            const reply = await patch(key, pointing(field, url));
            out[`${name} ${field} ${who}`] =
              `${reply.status} ${reply.body?.code} ${reply.body?.details?.startsWith(`${field}: `) ? field : reply.body?.details}`;
          }
        }
      }
      return out;
    };

    it('refuses every internal address form with a typed 400 naming the field, for either key (a name resolving to loopback: 403 for the project key, 400 for the admin)', async () => {
      const got = await answers(internal());
      const want: Record<string, string> = {};
      for (const [name] of internal()) {
        for (const field of ['llm.baseUrl', 'embedding.baseUrl']) {
          const projectKey =
            name === 'a DNS name resolving to loopback' ? `403 forbidden ${field}` : `400 invalid_request ${field}`;
          want[`${name} ${field} project`] = projectKey;
          want[`${name} ${field} admin`] = `400 invalid_request ${field}`;
        }
      }
      expect(got).toEqual(want);
    });

    it('refuses user-info and fragments even on the allow-listed upstream, and non-http schemes (400 naming the field)', async () => {
      const up = new URL(upstream.url);
      const got = await answers([
        ['user-info', `http://user:pass@${up.host}/v1`],
        ['user-info on a private address', 'http://user:pass@10.0.0.1/'],
        ['a fragment (the issue repro)', `${upstream.url}/m/internal#`],
        ['a fragment with text', `${upstream.url}/v1#x`],
        ['file:', 'file:///etc/passwd'],
        ['gopher:', `gopher://127.0.0.1:${canary.port}/_INFO`],
      ]);
      expect(Object.values(got).every((a) => /^400 invalid_request (llm|embedding)\.baseUrl$/.test(a))).toBe(true);
      expect(Object.keys(got)).toHaveLength(24);
    });

    it('gives a project key only the allow-list: a public endpoint outside it is 403 forbidden naming the field; the admin may set it', async () => {
      const url = `https://${PUBLIC_HOST}/v1`;
      const chooser = await t.project('chooser', stored('llm.baseUrl', `${upstream.url}/v1`));
      const byProject = await patch(chooser.key, pointing('llm.baseUrl', url), chooser.id);
      expect([byProject.status, byProject.body?.code]).toEqual([403, 'forbidden']);
      expect(byProject.body?.details).toBe(
        "llm.baseUrl: only the admin key may set a provider endpoint outside the operator's allow-list (ASK_PROVIDER_URL_ALLOWLIST)",
      );
      const byAdmin = await patch(t.adminKey, pointing('embedding.baseUrl', url), chooser.id);
      expect(byAdmin.status).toBe(200);
      expect((byAdmin.body?.['embeddingSettings'] as { baseUrl?: string }).baseUrl).toBe(url);
      // A project key may choose among the allow-listed endpoints.
      const allowed = await patch(chooser.key, pointing('embedding.baseUrl', `${other.url}/v1`), chooser.id);
      expect(allowed.status).toBe(200);
      expect((allowed.body?.['embeddingSettings'] as { baseUrl?: string }).baseUrl).toBe(`${other.url}/v1`);
    });

    it('left the stored endpoint and the stored key as they were', async () => {
      const read = await t.call('GET', `/api/v1/projects/${target.id}`, { key: target.key });
      expect(read.body?.['llmSettings']).toEqual({
        provider: 'openai',
        model: 'gpt-4o',
        baseUrl: `${upstream.url}/v1`,
      });
      expect(read.body?.['hasCredentials']).toBe(true);
      expect(await t.projects.getCredentials(target.id)).toEqual({ apiKey: STORED_KEY });
    });
  });

  describe('at connect time (settings stored without the save-time check)', () => {
    /** Per case: where the refusal came (`POST` answer, or the stream's `error` event) and what it said. */
    const asks = new Map<string, { where: string; error?: { status?: number; code?: string; details?: string } }>();
    const ingestions = new Map<
      string,
      { where: string; error?: { status?: number; code?: string; details?: string } }
    >();

    /** The POST's typed refusal, or the stream's end. */
    const settle = async (
      post: () => Promise<{ where: string; error?: { status?: number; code?: string; details?: string } }>,
    ) => {
      try {
        return await post();
      } catch (err) {
        if (err instanceof AskApiError)
          return { where: 'POST', error: { status: err.status, code: err.body.code, details: err.body.details } };
        throw err;
      }
    };

    beforeAll(async () => {
      const cases = internal().flatMap(([name, url]) =>
        (['llm.baseUrl', 'embedding.baseUrl'] as const).map((field) => ({ name: `${name} ${field}`, field, url })),
      );
      await Promise.all(
        cases.map(async (c) => {
          const p = await t.project(c.name, stored(c.field, c.url), { apiKey: STORED_KEY });
          asks.set(
            c.name,
            await settle(async () => {
              const accepted = await p.client.ask(p.id, 'How do I create an HNSW index?');
              const outcome = await follow(p.client, accepted.askId, accepted.sessionId, 60_000);
              return { where: `event ${outcome.end}`, error: outcome.error };
            }),
          );
          if (c.field === 'embedding.baseUrl') {
            ingestions.set(
              c.name,
              await settle(async () => {
                const accepted = await p.client.ingestKnowledge(p.id, [
                  { uri: 'notes.md', text: 'HNSW indexes are built with CREATE INDEX.' },
                ]);
                const followed = await p.client.followIngestion(p.id, accepted.ingestionId);
                return { where: followed.done ? 'event done' : 'event error', error: followed.error };
              }),
            );
          }
        }),
      );
      console.log(
        Object.fromEntries(
          [...asks, ...[...ingestions].map(([k, v]) => [`${k} (ingestion)`, v] as const)].map(([k, v]) => [
            k,
            `${v.where} ${v.error?.status} ${v.error?.details}`,
          ]),
        ),
      );
    }, 170_000);

    const summary = (o: { where: string; error?: { status?: number; code?: string; details?: string } }) =>
      `${o.where} ${o.error?.status} ${o.error?.code} ${o.error?.details?.split(':')[0]}`;

    it('refuses every ask with the typed 403 forbidden naming the field: the chat call in the synthesis worker, the question embedding in the gateway (IP literals, local names) or the retrieval worker (a name resolving to loopback)', () => {
      const got = Object.fromEntries([...asks].map(([name, o]) => [name, summary(o)]));
      const want = Object.fromEntries(
        [...asks.keys()].map((name) => {
          if (name.endsWith('llm.baseUrl')) return [name, 'event error 403 forbidden llm.baseUrl'];
          return [name, `${name.startsWith('a DNS name') ? 'event error' : 'POST'} 403 forbidden embedding.baseUrl`];
        }),
      );
      expect(got).toEqual(want);
      expect(asks.size).toBe(internal().length * 2);
    });

    it('refuses every upload with the typed 403 forbidden naming embedding.baseUrl (the gateway, or the ingestion worker after DNS)', () => {
      const got = Object.fromEntries([...ingestions].map(([name, o]) => [name, summary(o)]));
      const want = Object.fromEntries(
        [...ingestions.keys()].map((name) => [
          name,
          `${name.startsWith('a DNS name') ? 'event error' : 'POST'} 403 forbidden embedding.baseUrl`,
        ]),
      );
      expect(got).toEqual(want);
      expect(ingestions.size).toBe(internal().length);
    });

    it('never says where the name resolved to', () => {
      const rebind = [...asks, ...ingestions]
        .filter(([name]) => name.startsWith('a DNS name'))
        .map(([, o]) => o.error?.details);
      expect(rebind).toHaveLength(3);
      for (const details of rebind) {
        expect(details).toMatch(
          /the host resolves to a loopback address, which is not allowed unless the operator allow-lists it$/,
        );
        expect(details).not.toContain('127.0.0.1');
      }
    });
  });

  describe("every provider adapter's transport, after DNS (a name resolving to the canary)", () => {
    const AWS = {
      awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE',
      awsSecretAccessKey: 'fakeSecretKey0000000000000000000000000000',
    };
    const rebind = () => `http://${REBIND_HOST}:${canary.port}`;
    const adapters = (): Array<{
      name: string;
      settings: ProjectSettingsInput;
      credentials: Record<string, string>;
    }> => [
      {
        name: 'anthropic llm',
        settings: {
          llmSettings: { provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: rebind() },
          embeddingSettings: LOCAL_EMBEDDING,
        } as never,
        credentials: { apiKey: STORED_KEY },
      },
      {
        name: 'azure-foundry llm',
        settings: {
          llmSettings: { provider: 'azure-foundry', model: 'gpt-4o', baseUrl: rebind(), apiVersion: '2024-10-21' },
          embeddingSettings: LOCAL_EMBEDDING,
        } as never,
        credentials: { apiKey: STORED_KEY },
      },
      {
        name: 'bedrock llm (AWS SDK, HTTP/2)',
        settings: {
          llmSettings: {
            provider: 'bedrock',
            model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
            region: 'us-east-1',
            baseUrl: rebind(),
          },
          embeddingSettings: LOCAL_EMBEDDING,
        } as never,
        credentials: AWS,
      },
      {
        name: 'vertex llm',
        settings: {
          llmSettings: {
            provider: 'vertex',
            model: 'gemini-2.5-flash',
            gcpProject: 'demo',
            region: 'us-central1',
            baseUrl: rebind(),
          },
          embeddingSettings: LOCAL_EMBEDDING,
        } as never,
        credentials: { gcpAccessToken: 'ya29.fake-token' },
      },
      {
        name: 'ollama llm',
        settings: {
          llmSettings: { provider: 'ollama', model: 'llama3.1:8b', baseUrl: rebind() },
          embeddingSettings: LOCAL_EMBEDDING,
        } as never,
        credentials: {},
      },
      {
        name: 'azure-foundry embedding',
        settings: {
          llmSettings: LOCAL_LLM,
          embeddingSettings: {
            provider: 'azure-foundry',
            model: 'text-embedding-3-large',
            dimensions: 256,
            baseUrl: rebind(),
            apiVersion: '2024-10-21',
          },
        } as never,
        credentials: { apiKey: STORED_KEY },
      },
      {
        name: 'bedrock embedding (AWS SDK)',
        settings: {
          llmSettings: LOCAL_LLM,
          embeddingSettings: {
            provider: 'bedrock',
            model: 'amazon.titan-embed-text-v2:0',
            dimensions: 256,
            region: 'us-east-1',
            baseUrl: rebind(),
          },
        } as never,
        credentials: AWS,
      },
      {
        name: 'vertex embedding',
        settings: {
          llmSettings: LOCAL_LLM,
          embeddingSettings: {
            provider: 'vertex',
            model: 'text-embedding-005',
            dimensions: 256,
            gcpProject: 'demo',
            region: 'us-central1',
            baseUrl: rebind(),
          },
        } as never,
        credentials: { gcpAccessToken: 'ya29.fake-token' },
      },
      {
        name: 'ollama embedding',
        settings: {
          llmSettings: LOCAL_LLM,
          embeddingSettings: { provider: 'ollama', model: 'nomic-embed-text', dimensions: 256, baseUrl: rebind() },
        } as never,
        credentials: {},
      },
    ];

    it('refuses each one with the typed 403 forbidden naming its field (anthropic, azure, bedrock over the AWS SDK, vertex, ollama)', async () => {
      const got: Record<string, string> = {};
      await Promise.all(
        adapters().map(async (a) => {
          const p = await t.project(a.name, { ...a.settings, topK: 4 }, a.credentials);
          try {
            const accepted = await p.client.ask(p.id, 'How do I create an HNSW index?');
            const outcome = await follow(p.client, accepted.askId, accepted.sessionId, 100_000);
            got[a.name] = `${outcome.end} ${outcome.error?.status} ${outcome.error?.code} ${outcome.error?.details}`;
          } catch (err) {
            got[a.name] =
              err instanceof AskApiError ? `POST ${err.status} ${err.body.code} ${err.body.details}` : String(err);
          }
        }),
      );
      const reason = 'the host resolves to a loopback address, which is not allowed unless the operator allow-lists it';
      expect(got).toEqual(
        Object.fromEntries(
          adapters().map((a) => [
            a.name,
            `error 403 forbidden ${a.name.includes('embedding') ? 'embedding.baseUrl' : 'llm.baseUrl'}: ${reason}`,
          ]),
        ),
      );
    });
  });

  describe('a redirect from the allow-listed upstream to an internal address', () => {
    it('is not followed by the chat call: 403 forbidden naming llm.baseUrl', async () => {
      const p = await t.project('redirect-chat', stored('llm.baseUrl', `${upstream.url}/v1`), { apiKey: STORED_KEY });
      upstream.setFault({ kind: 'redirect', location: `http://127.0.0.1:${canary.port}/m/internal` }, 1);
      const before = upstream.requests.length;
      const accepted = await p.client.ask(p.id, 'How do I create an HNSW index?');
      const outcome = await follow(p.client, accepted.askId, accepted.sessionId, 60_000);
      upstream.clearFaults();
      expect([outcome.end, outcome.error?.status, outcome.error?.code, outcome.error?.details?.split(':')[0]]).toEqual([
        'error',
        403,
        'forbidden',
        'llm.baseUrl',
      ]);
      expect(upstream.requests.slice(before).map((r) => `${r.route} ${r.fault}`)).toEqual(['openai.chat redirect']);
    });

    it('is not followed by the embedding call: 403 forbidden naming embedding.baseUrl', async () => {
      const p = await t.project('redirect-embed', stored('embedding.baseUrl', `${upstream.url}/v1`), {
        apiKey: STORED_KEY,
      });
      upstream.setFault({ kind: 'redirect', location: `http://[::1]:${canary.port}/v1/embeddings` }, 1);
      const before = upstream.requests.length;
      const ingestion = await p.client.ingestKnowledge(p.id, [
        { uri: 'notes.md', text: 'HNSW indexes are built with CREATE INDEX.' },
      ]);
      const followed = await p.client.followIngestion(p.id, ingestion.ingestionId);
      upstream.clearFaults();
      expect([followed.error?.status, followed.error?.code, followed.error?.details?.split(':')[0]]).toEqual([
        403,
        'forbidden',
        'embedding.baseUrl',
      ]);
      expect(upstream.requests.slice(before).map((r) => `${r.route} ${r.fault}`)).toEqual([
        'openai.embeddings redirect',
      ]);
    });
  });

  describe('the allow-listed fake upstream still works', () => {
    it('answers an ask through the stored key (chat and question embedding on the fake upstream)', async () => {
      const p = await t.project(
        'allowed',
        {
          ...stored('llm.baseUrl', `${upstream.url}/v1`),
          embeddingSettings: pointing('embedding.baseUrl', `${upstream.url}/v1`).embedding as never,
        },
        { apiKey: STORED_KEY },
      );
      const ingestion = await p.client.ingestKnowledge(p.id, [
        { uri: 'notes.md', text: 'HNSW indexes are built with CREATE INDEX.' },
      ]);
      const ingested = await p.client.followIngestion(p.id, ingestion.ingestionId);
      expect(ingested.done?.counts).toMatchObject({ total: 1, done: 1, failed: 0 });
      const before = upstream.requests.length;
      const accepted = await p.client.ask(p.id, 'How do I create an HNSW index?');
      const outcome = await follow(p.client, accepted.askId, accepted.sessionId, 60_000);
      expect([outcome.end, outcome.answer]).toEqual(['done', FAKE_ANSWER]);
      expect(upstream.requests.slice(before).map((r) => `${r.route} ${r.auth}`)).toEqual([
        'openai.embeddings bearer',
        'openai.chat bearer',
      ]);
    });
  });

  describe('changing a provider host drops the stored credentials unless new ones come with it', () => {
    const hasCredentials = async (id: string) =>
      (await t.call('GET', `/api/v1/projects/${id}`, { key: t.adminKey })).body?.['hasCredentials'];

    it('another allow-listed origin, without credentials: dropped', async () => {
      const p = await t.project('move', stored('llm.baseUrl', `${upstream.url}/v1`), { apiKey: STORED_KEY });
      expect((await patch(p.key, pointing('llm.baseUrl', `${other.url}/v1`), p.id)).status).toBe(200);
      expect([await hasCredentials(p.id), await t.projects.getCredentials(p.id)]).toEqual([false, null]);
    });

    it('another origin with new credentials in the same request: the new ones are kept', async () => {
      const p = await t.project('move-with-key', stored('llm.baseUrl', `${upstream.url}/v1`), { apiKey: STORED_KEY });
      const reply = await patch(
        t.adminKey,
        {
          ...pointing('llm.baseUrl', `${other.url}/v1`),
          credentials: { apiKey: 'sk-new-for-the-other-host-0123456789' },
        },
        p.id,
      );
      expect(reply.status).toBe(200);
      expect(await t.projects.getCredentials(p.id)).toEqual({ apiKey: 'sk-new-for-the-other-host-0123456789' });
    });

    it('the same origin on another path, or the same settings again: kept', async () => {
      const p = await t.project('same-host', stored('llm.baseUrl', `${upstream.url}/v1`), { apiKey: STORED_KEY });
      expect((await patch(p.key, pointing('llm.baseUrl', `${upstream.url}/openai/v1`), p.id)).status).toBe(200);
      expect((await patch(p.key, pointing('llm.baseUrl', `${upstream.url}/openai/v1`), p.id)).status).toBe(200);
      expect(await t.projects.getCredentials(p.id)).toEqual({ apiKey: STORED_KEY });
    });

    it("the provider's default endpoint (baseUrl removed), or the embedding moved: dropped", async () => {
      const p = await t.project('to-default', stored('llm.baseUrl', `${upstream.url}/v1`), { apiKey: STORED_KEY });
      expect((await patch(t.adminKey, { llm: { provider: 'openai', model: 'gpt-4o' } }, p.id)).status).toBe(200);
      expect(await t.projects.getCredentials(p.id)).toBeNull();
      const e = await t.project('embedding-move', stored('embedding.baseUrl', `${upstream.url}/v1`), {
        apiKey: STORED_KEY,
      });
      expect((await patch(e.key, pointing('embedding.baseUrl', `${other.url}/v1`), e.id)).status).toBe(200);
      expect(await t.projects.getCredentials(e.id)).toBeNull();
    });
  });

  it("listens on loopback only when GATEWAY_HOST is unset: the machine's other IPv4 addresses refuse the gateway's port", async () => {
    const port = Number(new URL(t.stack.gatewayUrl).port);
    const others = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((a) => a.family === 'IPv4' && !a.internal)
      .map((a) => a.address);
    const reach = (host: string) =>
      new Promise<string>((done) => {
        const socket = connect({ host, port, timeout: 3_000 });
        socket.once('connect', () => (socket.destroy(), done('connected')));
        socket.once('timeout', () => (socket.destroy(), done('timeout')));
        socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
      });
    expect(await reach('127.0.0.1')).toBe('connected');
    const got = await Promise.all(others.map(reach));
    expect(got).toEqual(others.map(() => 'ECONNREFUSED'));
    console.log(
      `gateway port ${port}: 127.0.0.1 connected; ${others.map((a, i) => `${a} ${got[i]}`).join(', ') || 'no other IPv4 address on this machine'}`,
    );
  });

  describe('after every case above', () => {
    it('the loopback canary saw zero connections (and it does count one: a direct connection is seen)', async () => {
      expect(canary.connections).toEqual([]);
      await new Promise<void>((done) =>
        connect({ host: '127.0.0.1', port: canary.port })
          .once('close', () => done())
          .once('error', () => done()),
      );
      expect(canary.connections).toEqual([`127.0.0.1:${canary.port}`]);
    });
  });
});
