import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AskApiError, type AskClient } from '@ask/ask-client';
import { FAKE_ANSWER, type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import { AskClient as Client } from '@ask/ask-client';
import type { ProjectSettingsInput } from '@ask/persistence';
import { follow } from '../faults/fixture';
import { type Canary, startCanary, startTrustStack, type TrustStack } from './trust-stack';

const LOCAL_LLM = { provider: 'local', model: 'local' } as const;
const LOCAL_EMBEDDING = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;
const VERTEX_LLM = {
  provider: 'vertex',
  model: 'gemini-2.5-flash',
  gcpProject: 'demo',
  region: 'us-central1',
} as const;
const VERTEX_EMBEDDING = {
  provider: 'vertex',
  model: 'text-embedding-005',
  dimensions: 256,
  gcpProject: 'demo',
  region: 'us-central1',
} as const;
/** The operator's own AWS identity in every app's environment: no tenant may sign with it by default. */
const OPERATOR_AWS = {
  AWS_ACCESS_KEY_ID: 'AKIAOPERATOROWNKEY000',
  AWS_SECRET_ACCESS_KEY: 'operatorSecret0000000000000000000000000000',
};
const VERTEX_TYPE_REFUSED = (type: string) =>
  `credentials.gcpServiceAccountJson.type: "${type}" is not accepted: only a "service_account" key (client_email and private_key) is, because other credential types name files or addresses`;
const NO_GOOGLE =
  'credentials.gcpServiceAccountJson or credentials.gcpAccessToken is not set (ambient Google credentials are off for this project)';
const NO_AWS =
  'credentials.awsAccessKeyId and credentials.awsSecretAccessKey are not set (ambient AWS credentials are off for this project)';

/**
 * The six credential forms google-auth-library would honour with its own HTTP client (four
 * external-account ones, two authorized-user ones), each aimed at the canary: the attack sent the
 * worker's `/proc/self/environ` to `token_url`.
 */
function hostileForms(canary: string): Array<[string, Record<string, unknown>]> {
  const audience = '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x';
  const base = { type: 'external_account', audience, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' };
  return [
    ['credential_source.file', { ...base, token_url: canary, credential_source: { file: '/proc/self/environ' } }],
    [
      'credential_source.url with headers',
      {
        ...base,
        token_url: canary,
        credential_source: { url: canary, headers: { 'x-planted': '1' }, format: { type: 'text' } },
      },
    ],
    ['token_url', { ...base, token_url: canary, credential_source: { file: '/etc/hostname' } }],
    [
      'service_account_impersonation_url',
      {
        ...base,
        token_url: canary,
        service_account_impersonation_url: `${canary}/impersonate`,
        credential_source: { file: '/etc/hostname' },
      },
    ],
    [
      'authorized_user',
      { type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: canary },
    ],
    [
      'external_account_authorized_user',
      {
        type: 'external_account_authorized_user',
        audience,
        client_id: 'c',
        client_secret: 's',
        refresh_token: 'r',
        token_url: canary,
        token_info_url: canary,
        revoke_url: canary,
      },
    ],
  ];
}

/** Where a refusal came (`POST`, or the stream's `event <end>`) with its status, code and details. */
interface Outcome {
  where: string;
  status?: number;
  code?: string;
  details?: string;
}

async function settle(post: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await post();
  } catch (err) {
    if (err instanceof AskApiError)
      return { where: 'POST', status: err.status, code: err.body.code, details: err.body.details };
    throw err;
  }
}

const show = (o: Outcome) => `${o.where} ${o.status} ${o.code} ${o.details}`;

async function ask(p: { id: string; client: AskClient }): Promise<Outcome> {
  return settle(async () => {
    const accepted = await p.client.ask(p.id, 'How do I create an HNSW index?');
    const outcome = await follow(p.client, accepted.askId, accepted.sessionId, 90_000);
    return {
      where: `event ${outcome.end}`,
      status: outcome.error?.status,
      code: outcome.error?.code,
      details: outcome.error?.details ?? (outcome.end === 'done' ? outcome.answer : undefined),
    };
  });
}

async function ingest(p: { id: string; client: AskClient }): Promise<Outcome> {
  return settle(async () => {
    const accepted = await p.client.ingestKnowledge(p.id, [
      { uri: 'notes.md', text: 'HNSW indexes are built with CREATE INDEX.' },
    ]);
    const followed = await p.client.followIngestion(p.id, accepted.ingestionId);
    return {
      where: followed.done ? 'event done' : 'event error',
      status: followed.error?.status,
      code: followed.error?.code,
      details: followed.error?.details,
    };
  });
}

/**
 * Stored credentials are an operator decision too (issue 25 items 1 and 2), against the four apps as
 * processes: a Vertex credential can never name an address or a file (the six forms
 * google-auth-library would honour with its own HTTP client are a typed 400 at save, and rows written
 * straight to the database are refused with the typed 412 at ask and upload time, chat and
 * embedding), and a project that stores no credentials never runs as the operator: every app has
 * GOOGLE_APPLICATION_CREDENTIALS pointing at a credential file that would call the canary, and the
 * operator's AWS keys, yet a Vertex or Bedrock project without its own credentials gets the typed
 * 412 and makes no call, unless the operator lists it in ASK_AMBIENT_CREDENTIALS_PROJECTS. The
 * loopback canary (never allow-listed) sees zero connections.
 */
describe('credentials: stored keys name no address, no tenant runs as the operator (gateway and workers as processes)', () => {
  let t: TrustStack;
  let canary: Canary;
  let upstream: FakeUpstream;
  let dir: string;
  const ambientId = randomUUID();

  beforeAll(async () => {
    [canary, upstream] = await Promise.all([startCanary(), startFakeUpstream({ chunkDelayMs: 0 })]);
    dir = mkdtempSync(join(tmpdir(), 'ask-credentials-'));
    // The operator's ADC file: an external account whose token exchange would hit the canary.
    const adc = join(dir, 'adc.json');
    writeFileSync(join(dir, 'subject-token'), 'operator-subject-token');
    writeFileSync(
      adc,
      JSON.stringify({
        type: 'external_account',
        audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: `http://127.0.0.1:${canary.port}/operator-adc`,
        credential_source: { file: join(dir, 'subject-token') },
      }),
    );
    t = await startTrustStack('credentials', {
      ASK_PROVIDER_URL_ALLOWLIST: upstream.url,
      GOOGLE_APPLICATION_CREDENTIALS: adc,
      ...OPERATOR_AWS,
      AWS_EC2_METADATA_DISABLED: 'true',
      ASK_AMBIENT_CREDENTIALS_PROJECTS: ambientId,
      ASK_DEADLINE_MS: '90000',
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([canary?.close(), upstream?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const forms = () => hostileForms(`http://127.0.0.1:${canary.port}/token`);
  const patch = (key: string, id: string, body: unknown) =>
    t.call('PATCH', `/api/v1/projects/${id}`, { key, json: body });

  describe('on PATCH (save time)', () => {
    it('refuses each of the six forms with 400 invalid_request naming credentials.gcpServiceAccountJson.type, for either block and key, and stores nothing', async () => {
      const p = await t.project(
        'save',
        { llmSettings: LOCAL_LLM, embeddingSettings: LOCAL_EMBEDDING, topK: 4 } as never,
        {
          gcpAccessToken: 'ya29.stored-before',
        },
      );
      const got: Record<string, string> = {};
      const want: Record<string, string> = {};
      for (const [name, json] of forms()) {
        for (const [block, settings] of [
          ['llm', { llm: VERTEX_LLM }],
          ['embedding', { embedding: VERTEX_EMBEDDING }],
        ] as const) {
          for (const [who, key] of [
            ['project', p.key],
            ['admin', t.adminKey],
          ] as const) {
            const reply = await patch(key, p.id, {
              ...settings,
              credentials: { gcpServiceAccountJson: JSON.stringify(json) },
            });
            got[`${name} ${block} ${who}`] = `${reply.status} ${reply.body?.code} ${reply.body?.details}`;
            want[`${name} ${block} ${who}`] = `400 invalid_request ${VERTEX_TYPE_REFUSED(String(json['type']))}`;
          }
        }
      }
      expect(got).toEqual(want);
      expect(await t.projects.getCredentials(p.id)).toEqual({ gcpAccessToken: 'ya29.stored-before' });
      expect((await t.projects.findById(p.id))?.llmSettings).toEqual(LOCAL_LLM);
    });

    it('refuses "{not json", a service_account with a hostile token_uri and one with a credential_source beside it (400 naming the field)', async () => {
      const p = await t.project('save-shapes', {
        llmSettings: LOCAL_LLM,
        embeddingSettings: LOCAL_EMBEDDING,
        topK: 4,
      } as never);
      const key = {
        type: 'service_account',
        client_email: 'a@demo.iam.gserviceaccount.com',
        private_key: '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n',
      };
      const got = [];
      for (const json of [
        '{not json',
        JSON.stringify({ ...key, token_uri: `http://127.0.0.1:${canary.port}/token` }),
        JSON.stringify({ ...key, credential_source: { file: '/proc/self/environ' } }),
      ]) {
        const reply = await patch(p.key, p.id, { llm: VERTEX_LLM, credentials: { gcpServiceAccountJson: json } });
        got.push(`${reply.status} ${reply.body?.code} ${reply.body?.details?.split(':')[0]}`);
      }
      expect(got).toEqual([
        '400 invalid_request credentials.gcpServiceAccountJson',
        '400 invalid_request credentials.gcpServiceAccountJson.token_uri',
        '400 invalid_request credentials.gcpServiceAccountJson.credential_source',
      ]);
      expect([await t.projects.getCredentials(p.id), (await t.projects.findById(p.id))?.llmSettings]).toEqual([
        null,
        LOCAL_LLM,
      ]);
    });

    it('refuses a Vertex or Bedrock block without its credentials with the typed 412 naming the fields; with them in the same body it is stored', async () => {
      const p = await t.project('save-missing', {
        llmSettings: LOCAL_LLM,
        embeddingSettings: LOCAL_EMBEDDING,
        topK: 4,
      } as never);
      const bedrockLlm = {
        provider: 'bedrock',
        model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
        region: 'us-east-1',
      };
      const bedrockEmbedding = {
        provider: 'bedrock',
        model: 'amazon.titan-embed-text-v2:0',
        dimensions: 256,
        region: 'us-east-1',
      };
      const got = [];
      for (const body of [
        { llm: VERTEX_LLM },
        { embedding: VERTEX_EMBEDDING },
        { llm: bedrockLlm },
        { embedding: bedrockEmbedding },
      ]) {
        const reply = await patch(p.key, p.id, body);
        got.push(`${reply.status} ${reply.body?.code} ${reply.body?.details}`);
      }
      expect(got).toEqual([
        `412 llm_not_configured provider=vertex: ${NO_GOOGLE}`,
        `412 embedding_not_configured embedding provider=vertex: ${NO_GOOGLE}`,
        `412 llm_not_configured provider=bedrock: ${NO_AWS}`,
        `412 embedding_not_configured embedding provider=bedrock: ${NO_AWS}`,
      ]);
      expect((await t.projects.findById(p.id))?.llmSettings).toEqual(LOCAL_LLM);
      const withKeys = await patch(p.key, p.id, {
        llm: bedrockLlm,
        credentials: {
          awsAccessKeyId: 'AKIAPROJECTOWNKEY000',
          awsSecretAccessKey: 'projectSecret000000000000000000000000000',
        },
      });
      expect(withKeys.status).toBe(200);
    });

    it('gives a project key no way to turn ambient credentials on (no such project field: 400)', async () => {
      const p = await t.project('no-switch', {
        llmSettings: LOCAL_LLM,
        embeddingSettings: LOCAL_EMBEDDING,
        topK: 4,
      } as never);
      const got = [];
      for (const body of [
        { ambientCredentials: true },
        { llm: { ...VERTEX_LLM, ambientCredentials: true } },
        { credentials: { ambient: 'true' } },
      ]) {
        const reply = await patch(p.key, p.id, body);
        got.push(`${reply.status} ${reply.body?.code}`);
      }
      expect(got).toEqual(['400 invalid_request', '400 invalid_request', '400 invalid_request']);
    });
  });

  describe('at ask and upload time (rows written straight to the database, past the save-time check)', () => {
    const outcomes = new Map<string, Outcome>();

    beforeAll(async () => {
      const cases: Array<{
        name: string;
        settings: ProjectSettingsInput;
        credentials?: Record<string, string>;
        run: 'ask' | 'both';
      }> = [];
      for (const [name, json] of forms()) {
        const credentials = { gcpServiceAccountJson: JSON.stringify(json) };
        cases.push({
          name: `${name} chat`,
          settings: { llmSettings: VERTEX_LLM, embeddingSettings: LOCAL_EMBEDDING, topK: 4 } as never,
          credentials,
          run: 'ask',
        });
        cases.push({
          name: `${name} embedding`,
          settings: { llmSettings: LOCAL_LLM, embeddingSettings: VERTEX_EMBEDDING, topK: 4 } as never,
          credentials,
          run: 'both',
        });
      }
      // No credentials at all: the operator's ADC file and AWS keys are in every app's environment.
      const bedrockLlm = {
        provider: 'bedrock',
        model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
        region: 'us-east-1',
        baseUrl: upstream.url,
      };
      const bedrockEmbedding = {
        provider: 'bedrock',
        model: 'amazon.titan-embed-text-v2:0',
        dimensions: 256,
        region: 'us-east-1',
        baseUrl: upstream.url,
      };
      cases.push({
        name: 'no credentials vertex chat',
        settings: { llmSettings: VERTEX_LLM, embeddingSettings: LOCAL_EMBEDDING, topK: 4 } as never,
        run: 'ask',
      });
      cases.push({
        name: 'no credentials vertex embedding',
        settings: { llmSettings: LOCAL_LLM, embeddingSettings: VERTEX_EMBEDDING, topK: 4 } as never,
        run: 'both',
      });
      cases.push({
        name: 'no credentials bedrock chat',
        settings: { llmSettings: bedrockLlm, embeddingSettings: LOCAL_EMBEDDING, topK: 4 } as never,
        run: 'ask',
      });
      cases.push({
        name: 'no credentials bedrock embedding',
        settings: { llmSettings: LOCAL_LLM, embeddingSettings: bedrockEmbedding, topK: 4 } as never,
        run: 'both',
      });
      await Promise.all(
        cases.map(async (c) => {
          const p = await t.project(c.name, c.settings, c.credentials);
          outcomes.set(`${c.name} ask`, await ask(p));
          if (c.run === 'both') outcomes.set(`${c.name} upload`, await ingest(p));
        }),
      );
      console.log(Object.fromEntries([...outcomes].map(([k, v]) => [k, show(v)])));
    }, 170_000);

    it('refuses every hostile form with the typed 412 naming the type: chat in the synthesis worker, the embedding at the POST (ask and upload)', () => {
      const got = Object.fromEntries(
        [...outcomes].filter(([k]) => !k.startsWith('no credentials')).map(([k, v]) => [k, show(v)]),
      );
      const want: Record<string, string> = {};
      for (const [name, json] of forms()) {
        const reason = VERTEX_TYPE_REFUSED(String(json['type']));
        want[`${name} chat ask`] = `event error 412 llm_not_configured provider=vertex: ${reason}`;
        want[`${name} embedding ask`] = `POST 412 embedding_not_configured embedding provider=vertex: ${reason}`;
        want[`${name} embedding upload`] = `POST 412 embedding_not_configured embedding provider=vertex: ${reason}`;
      }
      expect(got).toEqual(want);
    });

    it("refuses a Vertex or Bedrock project without credentials with the typed 412 instead of using the operator's ADC file or AWS keys", () => {
      const got = Object.fromEntries(
        [...outcomes].filter(([k]) => k.startsWith('no credentials')).map(([k, v]) => [k, show(v)]),
      );
      expect(got).toEqual({
        'no credentials vertex chat ask': `event error 412 llm_not_configured provider=vertex: ${NO_GOOGLE}`,
        'no credentials vertex embedding ask': `POST 412 embedding_not_configured embedding provider=vertex: ${NO_GOOGLE}`,
        'no credentials vertex embedding upload': `POST 412 embedding_not_configured embedding provider=vertex: ${NO_GOOGLE}`,
        'no credentials bedrock chat ask': `event error 412 llm_not_configured provider=bedrock: ${NO_AWS}`,
        'no credentials bedrock embedding ask': `POST 412 embedding_not_configured embedding provider=bedrock: ${NO_AWS}`,
        'no credentials bedrock embedding upload': `POST 412 embedding_not_configured embedding provider=bedrock: ${NO_AWS}`,
      });
      // The operator's AWS keys signed nothing: the allow-listed Bedrock endpoint saw no request.
      expect(upstream.requests.filter((r) => r.route.startsWith('bedrock'))).toEqual([]);
    });
  });

  describe('a project the operator listed in ASK_AMBIENT_CREDENTIALS_PROJECTS', () => {
    it("is served with the operator's AWS identity (SigV4-signed call to the allow-listed Bedrock endpoint), and may save Bedrock without keys", async () => {
      const created = await t.projects.create({
        name: 'ambient',
        llmSettings: LOCAL_LLM,
        embeddingSettings: LOCAL_EMBEDDING,
        topK: 4,
      } as never);
      // The operator listed the id before the apps started: give the new row that id.
      await t.db.dataSource.query('UPDATE projects SET id = $1 WHERE id = $2', [ambientId, created.id]);
      const key = (await t.keys.create(ambientId, 'trust suite')).key;
      const saved = await patch(key, ambientId, {
        llm: {
          provider: 'bedrock',
          model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
          region: 'us-east-1',
          baseUrl: upstream.url,
        },
      });
      expect(saved.status).toBe(200);
      const before = upstream.requests.length;
      const outcome = await ask({ id: ambientId, client: new Client(t.stack.gatewayUrl, key) });
      expect(show(outcome)).toBe(`event done undefined undefined ${FAKE_ANSWER}`);
      expect(upstream.requests.slice(before).map((r) => `${r.route} ${r.auth}`)).toEqual([
        expect.stringMatching(/^bedrock\S* aws-sigv4$/),
      ]);
    });
  });

  describe('after every case above', () => {
    it('the loopback canary saw zero connections (no token_url, credential_source.url, impersonation URL or operator ADC exchange was called)', () => {
      expect(canary.connections).toEqual([]);
    });

    it("no app wrote the operator's subject token or the admin key in its logs", () => {
      expect(t.logs()).not.toContain('operator-subject-token');
      expect(t.logs()).not.toContain(t.adminKey);
    });
  });
});
