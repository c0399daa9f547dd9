import { createChatProvider } from '../create-chat-provider';
import { chatContract, collect } from '../testing/chat-contract';
import { allowing } from '../testing/egress';
import { OpenAiChatProvider } from './openai-chat.provider';
import { startFakeUpstream } from '../testing/fake-upstream';

const KEY = 'azure-test-key-0000000000000000';

describe(`${OpenAiChatProvider.name} on Azure AI Foundry`, () => {
  describe('deployment path with api-version', () => {
    chatContract({
      provider: 'azure-foundry',
      model: 'gpt-4o',
      route: 'azure.deployments.chat',
      window: 128000,
      create: (fake) =>
        createChatProvider(
          {
            provider: 'azure-foundry',
            model: 'gpt-4o',
            baseUrl: 'https://example-resource.openai.azure.com',
            apiVersion: '2024-10-21',
          },
          { apiKey: KEY },
          { baseUrlOverrides: { 'azure-foundry': fake.url } },
        ),
    });
  });

  describe('v1 endpoint', () => {
    chatContract({
      provider: 'azure-foundry',
      model: 'gpt-4.1-mini',
      route: 'azure.v1.chat',
      window: 1000000,
      overflowWords: 1000500,
      create: (fake) =>
        createChatProvider(
          { provider: 'azure-foundry', model: 'gpt-4.1-mini', baseUrl: fake.url },
          { apiKey: KEY },
          allowing(fake),
        ),
    });
  });

  it('sends the key in api-key and the api-version in the query', async () => {
    const fake = await startFakeUpstream();
    try {
      const provider = createChatProvider(
        { provider: 'azure-foundry', model: 'gpt-4o', baseUrl: fake.url, apiVersion: '2024-10-21' },
        { apiKey: KEY },
        allowing(fake),
      );
      await collect(
        provider.streamChat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], maxTokens: 32 }),
      );
      expect(fake.requests[0]).toMatchObject({
        path: '/openai/deployments/gpt-4o/chat/completions',
        query: { 'api-version': '2024-10-21' },
        auth: 'api-key',
      });
    } finally {
      await fake.close();
    }
  });
});
