import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { AskErrorCode } from '@ask/ask-errors';
import { createChatProvider } from '../create-chat-provider';
import { createEmbeddingProvider } from '../create-embedding-provider';
import { EgressPolicy, findEgressRefusal } from '../egress/egress-policy';
import type { FetchLike } from '../wire/http';
import { TOKEN_EXCHANGE_URL, vertexTokenSource } from './vertex-auth';
import { GOOGLE_TOKEN_URL } from './vertex-credentials';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const EMAIL = 'ask-test@demo-project.iam.gserviceaccount.com';
const KEY_FILE = JSON.stringify({ type: 'service_account', client_email: EMAIL, private_key: PRIVATE_KEY });

/** A fetch that records each call and answers as Google's token endpoint does. */
function tokenEndpoint(): { fetch: FetchLike; calls: Array<{ url: string; method?: string; body: string }> } {
  const calls: Array<{ url: string; method?: string; body: string }> = [];
  const fetchImpl = (async (input: unknown, init?: { method?: string; body?: unknown }) => {
    calls.push({ url: String(input), method: init?.method, body: String(init?.body) });
    return new Response(JSON.stringify({ access_token: 'ya29.minted', expires_in: 3599, token_type: 'Bearer' }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }) as unknown as FetchLike;
  return { fetch: fetchImpl, calls };
}

/** The six forms: four external-account ones and two authorized-user ones, all aimed at `canary`. */
export function hostileForms(canary: string): Array<[string, Record<string, unknown>]> {
  const audience = '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x';
  const base = { type: 'external_account', audience, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' };
  return [
    ['credential_source.file', { ...base, token_url: canary, credential_source: { file: '/proc/self/environ' } }],
    [
      'credential_source.url with headers',
      { ...base, token_url: canary, credential_source: { url: canary, headers: { 'x-planted': '1' } } },
    ],
    ['token_url', { ...base, token_url: canary, credential_source: { file: '/etc/hostname' } }],
    [
      'service_account_impersonation_url',
      {
        ...base,
        token_url: 'https://sts.googleapis.com/v1/token',
        service_account_impersonation_url: canary,
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
      },
    ],
  ];
}

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe(vertexTokenSource.name, () => {
  describe('a service-account key', () => {
    it('exchanges an RS256 assertion signed with the key at the Google token endpoint, through the given fetch only', async () => {
      const endpoint = tokenEndpoint();
      const token = vertexTokenSource({ gcpServiceAccountJson: KEY_FILE }, { fetch: endpoint.fetch });
      expect(await token()).toBe('ya29.minted');
      expect(endpoint.calls.map((c) => `${c.method} ${c.url}`)).toEqual([`POST ${TOKEN_EXCHANGE_URL}`]);
      const form = new URLSearchParams(endpoint.calls[0].body);
      expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
      // Checked with node:crypto and the public half, independently of the library that signed it.
      const [header, payload, signature] = (form.get('assertion') ?? '').split('.');
      const signed = verify(
        'RSA-SHA256',
        Buffer.from(`${header}.${payload}`),
        publicKey,
        Buffer.from(signature, 'base64url'),
      );
      expect(signed).toBe(true);
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
      expect([claims['iss'], claims['aud'], claims['scope']]).toEqual([
        EMAIL,
        TOKEN_EXCHANGE_URL,
        'https://www.googleapis.com/auth/cloud-platform',
      ]);
      expect((claims['exp'] as number) - (claims['iat'] as number)).toBe(3600);
    });

    it.each(hostileForms('http://127.0.0.1:9/token'))(
      'refuses the %s form with 412 llm_not_configured naming the type, and makes no request',
      (_name, json) => {
        const endpoint = tokenEndpoint();
        const err = caught(() =>
          vertexTokenSource({ gcpServiceAccountJson: JSON.stringify(json) }, { fetch: endpoint.fetch }),
        );
        expect(err).toMatchObject({ status: 412, code: AskErrorCode.LlmNotConfigured });
        expect((err as { details: string }).details).toMatch(
          new RegExp(
            `^provider=vertex: credentials\\.gcpServiceAccountJson\\.type: "${String(json['type'])}" is not accepted`,
          ),
        );
        expect(endpoint.calls).toEqual([]);
      },
    );

    it('refuses a key whose token_uri is not Google (a row stored before the save-time check)', () => {
      const json = JSON.stringify({ ...JSON.parse(KEY_FILE), token_uri: 'http://127.0.0.1:9/token' });
      expect(
        caught(() => vertexTokenSource({ gcpServiceAccountJson: json }, { fetch: tokenEndpoint().fetch })),
      ).toMatchObject({
        status: 412,
        details: `provider=vertex: credentials.gcpServiceAccountJson.token_uri: must be ${GOOGLE_TOKEN_URL} (or left out)`,
      });
    });
  });

  describe('nothing stored', () => {
    it('is 412 llm_not_configured naming both fields when the operator did not enable ambient credentials', () => {
      expect(caught(() => vertexTokenSource({}, { fetch: tokenEndpoint().fetch }))).toMatchObject({
        status: 412,
        code: AskErrorCode.LlmNotConfigured,
        details:
          'provider=vertex: credentials.gcpServiceAccountJson or credentials.gcpAccessToken is not set (ambient Google credentials are off for this project)',
      });
    });

    it('uses Application Default Credentials only when the operator enabled them (no call until asked)', () => {
      expect(typeof vertexTokenSource({}, { fetch: tokenEndpoint().fetch, ambientCredentials: true })).toBe('function');
    });
  });
});

describe('the Vertex adapters: the token exchange goes through the egress policy', () => {
  let canary: Server;
  let connections = 0;
  let policy: EgressPolicy;

  beforeAll(async () => {
    canary = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((done) => canary.listen(0, '127.0.0.1', done));
    // The operator's resolver sends Google's token host to loopback: the policy must refuse it.
    policy = new EgressPolicy({ staticHosts: [{ host: 'www.googleapis.com', addresses: ['127.0.0.1'] }] });
  });
  afterAll(async () => {
    await policy.close();
    await new Promise<void>((done) => canary.close(() => done()));
  });

  const settings = {
    provider: 'vertex',
    model: 'gemini-2.5-flash',
    gcpProject: 'demo',
    region: 'us-central1',
  } as const;

  it('chat: the token request is refused after DNS (an EgressRefusedError naming credentials.gcpServiceAccountJson), 0 connections', async () => {
    const chat = createChatProvider(settings, { gcpServiceAccountJson: KEY_FILE }, { egress: policy });
    let err: unknown;
    try {
      for await (const chunk of chat.streamChat({
        model: settings.model,
        messages: [{ role: 'user', content: 'hi' }],
        maxTokens: 16,
      }))
        void chunk;
    } catch (e) {
      err = e;
    }
    expect(findEgressRefusal(err)?.field).toBe('credentials.gcpServiceAccountJson');
    expect(connections).toBe(0);
  });

  it('embedding: the same', async () => {
    const embedder = createEmbeddingProvider(
      { provider: 'vertex', model: 'text-embedding-005', dimensions: 256, gcpProject: 'demo', region: 'us-central1' },
      { gcpServiceAccountJson: KEY_FILE },
      { egress: policy },
    );
    const err = await embedder.embed(['hi']).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ status: 403, code: AskErrorCode.Forbidden });
    expect((err as { details: string }).details).toMatch(
      /^credentials\.gcpServiceAccountJson: the host resolves to a loopback address/,
    );
    expect(connections).toBe(0);
  });

  it('Bedrock without keys is 412 unless ambient credentials are enabled (chat and embedding)', () => {
    const bedrock = {
      provider: 'bedrock',
      model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
      region: 'us-east-1',
    } as const;
    const missing =
      'provider=bedrock: credentials.awsAccessKeyId and credentials.awsSecretAccessKey are not set (ambient AWS credentials are off for this project)';
    expect(
      caught(() => createChatProvider(bedrock, { awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE' }, { egress: policy })),
    ).toMatchObject({
      status: 412,
      code: AskErrorCode.LlmNotConfigured,
      details: missing,
    });
    expect(
      caught(() =>
        createEmbeddingProvider(
          { provider: 'bedrock', model: 'amazon.titan-embed-text-v2:0', dimensions: 256, region: 'us-east-1' },
          {},
          { egress: policy },
        ),
      ),
    ).toMatchObject({ status: 412, code: AskErrorCode.EmbeddingNotConfigured, details: `embedding ${missing}` });
    expect(caught(() => createChatProvider(bedrock, {}, { egress: policy, ambientCredentials: true }))).toBeUndefined();
  });
});
