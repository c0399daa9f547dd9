import { AskError } from '@ask/ask-errors';
import { createChatProvider } from '../create-chat-provider';
import { createEmbeddingProvider } from '../create-embedding-provider';
import { EgressPolicy, type LookupFunction } from '../egress/egress-policy';
import type { ChatProvider, EmbeddingProvider } from '../types';

const TOKEN = 'ya29.PLANTED-vertex-token-0000000000';

/**
 * A Vertex `region` is spliced into the host (`https://{region}-aiplatform.googleapis.com`), so a
 * region like `attacker.example/x?` once sent the project's (or the service's ADC) bearer to
 * `attacker.example`: no `baseUrl` is involved, so neither the save-time endpoint check nor the
 * allow-list saw it. The production transport runs here; its resolver records every host name a
 * connection asks for and answers ENOTFOUND, so nothing leaves the machine.
 */
describe('Vertex region is a location id, never a host', () => {
  let looked: string[];
  let egress: EgressPolicy;
  beforeEach(() => {
    looked = [];
    const lookup: LookupFunction = (hostname, _options, callback) => {
      looked.push(hostname);
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    };
    egress = new EgressPolicy({ lookup });
  });
  afterEach(() => egress.close());

  const chat = (region: string): ChatProvider =>
    createChatProvider(
      { provider: 'vertex', model: 'gemini-2.5-flash', gcpProject: 'p', region },
      { gcpAccessToken: TOKEN },
      { egress },
    );
  const embedder = (region: string): EmbeddingProvider =>
    createEmbeddingProvider(
      { provider: 'vertex', model: 'text-embedding-005', dimensions: 768, gcpProject: 'p', region },
      { gcpAccessToken: TOKEN },
      { egress },
    );

  /** What building and calling the adapter did: the typed refusal, or the host names it connected to. */
  const outcome = async (build: () => ChatProvider | EmbeddingProvider): Promise<string> => {
    looked = [];
    let provider: ChatProvider | EmbeddingProvider;
    try {
      provider = build();
    } catch (err) {
      return err instanceof AskError ? `${err.status} ${err.code} ${err.details}` : `untyped ${String(err)}`;
    }
    try {
      if ('embed' in provider) await provider.embed(['hello']);
      else
        for await (const _ of provider.streamChat({
          model: 'gemini-2.5-flash',
          messages: [{ role: 'user', content: 'hi' }],
          maxTokens: 16,
        }));
    } catch {
      // ENOTFOUND from the recording resolver: the host it asked for is the answer.
    }
    return `connected ${looked.join(' ')}`;
  };

  const why = 'provider=vertex: region must be a location id like us-central1 (letters, digits and inner hyphens)';
  const refused = `412 llm_not_configured ${why}`;
  const refusedEmbedder = `412 embedding_not_configured embedding ${why}`;

  it.each([
    ['a path after a host', 'attacker.example/x?'],
    ['a query after a host', 'attacker.example?'],
    ['a fragment after a host', 'attacker.example#'],
    ['user-info', 'x@attacker.example/'],
    ['dots (the host becomes a.attacker.example-aiplatform…)', 'a.attacker.example'],
    ['a port', 'attacker.example:443/'],
    ['percent-encoding', 'attacker.example%2F'],
    ['a trailing dot', 'us-central1.'],
    ['an empty region', ''],
  ])('refuses %s (%j) before any connection, for chat and embeddings', async (_name, region) => {
    expect([await outcome(() => chat(region)), await outcome(() => embedder(region))]).toEqual([
      refused,
      refusedEmbedder,
    ]);
    expect(looked).toEqual([]);
  });

  it.each([
    ['us-central1', 'us-central1-aiplatform.googleapis.com'],
    ['europe-west4', 'europe-west4-aiplatform.googleapis.com'],
    ['global', 'aiplatform.googleapis.com'],
  ])('connects a location id (%s) to its Google host only', async (region, host) => {
    expect(await outcome(() => chat(region))).toBe(`connected ${host}`);
    expect(await outcome(() => embedder(region))).toBe(`connected ${host}`);
  });
});
