import { createChatProvider } from '../create-chat-provider';
import { chatContract, collect } from '../testing/chat-contract';
import { startFakeUpstream } from '../testing/fake-upstream';
import { BedrockChatProvider } from './bedrock-chat.provider';

const CREDENTIALS = {
  awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE',
  awsSecretAccessKey: 'fakeSecretKey0000000000000000000000000000',
};
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

describe(BedrockChatProvider.name, () => {
  describe('Claude on Bedrock (ConverseStream)', () => {
    chatContract({
      provider: 'bedrock',
      model: CLAUDE,
      route: 'bedrock.converse-stream',
      window: 200000,
      disclosesCounts: false,
      create: (fake) =>
        createChatProvider({ provider: 'bedrock', model: CLAUDE, region: 'us-east-1' }, CREDENTIALS, {
          baseUrlOverrides: { bedrock: fake.url },
        }),
    });
  });

  describe('Llama 3.1 on Bedrock (exact Llama 3 tokenizer in the fake)', () => {
    chatContract({
      provider: 'bedrock',
      model: 'meta.llama3-1-8b-instruct-v1:0',
      route: 'bedrock.converse-stream',
      window: 128000,
      disclosesCounts: false,
      create: (fake) =>
        createChatProvider(
          { provider: 'bedrock', model: 'meta.llama3-1-8b-instruct-v1:0', region: 'us-west-2' },
          CREDENTIALS,
          { baseUrlOverrides: { bedrock: fake.url } },
        ),
    });
  });

  describe('wire', () => {
    it('signs with SigV4, puts the system prompt in `system` and the budget in inferenceConfig', async () => {
      const fake = await startFakeUpstream();
      try {
        const provider = createChatProvider({ provider: 'bedrock', model: CLAUDE, region: 'us-east-1' }, CREDENTIALS, {
          baseUrlOverrides: { bedrock: fake.url },
        });
        await collect(
          provider.streamChat({
            model: CLAUDE,
            messages: [
              { role: 'system', content: 'Be brief.' },
              { role: 'user', content: 'Hi' },
            ],
            maxTokens: 77,
          }),
        );
        expect(fake.requests[0]).toMatchObject({
          path: `/model/${encodeURIComponent(CLAUDE)}/converse-stream`,
          auth: 'aws-sigv4',
          body: {
            system: [{ text: 'Be brief.' }],
            messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
            inferenceConfig: { maxTokens: 77 },
          },
        });
        expect(JSON.stringify(fake.requests)).not.toContain(CREDENTIALS.awsSecretAccessKey);
      } finally {
        await fake.close();
      }
    });

    it("signs the project's keys with SigV4 even when the operator's AWS_BEARER_TOKEN_BEDROCK is in the environment", async () => {
      const fake = await startFakeUpstream();
      const before = process.env['AWS_BEARER_TOKEN_BEDROCK'];
      process.env['AWS_BEARER_TOKEN_BEDROCK'] = 'operator-bedrock-api-key-0000000000';
      try {
        const provider = createChatProvider({ provider: 'bedrock', model: CLAUDE, region: 'us-east-1' }, CREDENTIALS, {
          baseUrlOverrides: { bedrock: fake.url },
        });
        await collect(
          provider.streamChat({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], maxTokens: 16 }),
        );
        expect(fake.requests.map((r) => `${r.route} ${r.auth}`)).toEqual(['bedrock.converse-stream aws-sigv4']);
      } finally {
        if (before === undefined) delete process.env['AWS_BEARER_TOKEN_BEDROCK'];
        else process.env['AWS_BEARER_TOKEN_BEDROCK'] = before;
        await fake.close();
      }
    });
  });
});
