import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createChatProvider } from './create-chat-provider';
import { createEmbeddingProvider } from './create-embedding-provider';
import { collect } from './testing/chat-contract';
import { allowing } from './testing/egress';
import { type FakeUpstream, startFakeUpstream } from './testing/fake-upstream';
import type { EmbeddingSettings, LlmSettings, ProviderCredentials } from './types';

interface Example {
  llm: LlmSettings;
  embedding?: EmbeddingSettings;
  credentials: ProviderCredentials;
}

const DOC = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'providers.md'), 'utf8');
const EXAMPLES = [...DOC.matchAll(/```json example\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

/** docs/providers.md: every example configuration works against the fake upstream. */
describe('docs/providers.md examples', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeUpstream();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('has one example per provider at least', () => {
    const providers = EXAMPLES.map((e) => (JSON.parse(e) as Example).llm.provider);
    expect(new Set(providers)).toEqual(
      new Set(['openai', 'azure-foundry', 'anthropic', 'bedrock', 'vertex', 'ollama', 'local']),
    );
  });

  it.each(EXAMPLES.map((text) => [(JSON.parse(text) as Example).llm.model, text]))(
    '%s streams an answer and embeds',
    async (_model, text) => {
      const example = JSON.parse(text.replaceAll('http://127.0.0.1:8787', fake.url)) as Example;
      const chat = createChatProvider(example.llm, example.credentials, allowing(fake));
      const { text: answer, usage } = await collect(
        chat.streamChat({
          model: example.llm.model,
          messages: [
            {
              role: 'user',
              content:
                'Context:\n[1] knowledge · Doc (score 0.9)\nThe fake upstream answers.\n\nQuestion: What answers?',
            },
          ],
          maxTokens: 128,
        }),
      );
      expect(answer.length).toBeGreaterThan(0);
      expect(usage?.promptTokens).toBeGreaterThan(0);
      if (example.embedding) {
        const embedder = createEmbeddingProvider(example.embedding, example.credentials, allowing(fake));
        const vectors = await embedder.embed(['one text']);
        expect(vectors[0]).toHaveLength(example.embedding.dimensions);
      }
    },
    30000,
  );
});
