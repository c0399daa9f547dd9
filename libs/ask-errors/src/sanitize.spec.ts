import { MAX_PROVIDER_MESSAGE_CHARS, sanitizeProviderMessage } from './sanitize';

// Planted secrets, built at run time so no literal key-shaped string sits in the repository.
const rep = (s: string, n: number): string => s.repeat(n);
const SECRETS = {
  openai: `sk-proj-${rep('Ab3', 16)}`,
  openaiLegacy: `sk-${rep('x9Y', 16)}`,
  anthropic: `sk-ant-api03-${rep('Qw7_', 20)}`,
  awsKeyId: `AKIA${rep('Z7', 8)}`,
  awsTempKeyId: `ASIA${rep('Q4', 8)}`,
  awsSecret: `${rep('wJalr', 4)}XUtnFEMI/K7MDENG/${'bPxRfiCY'}${'EX'}`.slice(0, 40),
  google: `ya29.${rep('a0AfH6SM', 8)}`,
  googleApiKey: `AIza${rep('Sy9_', 9)}`,
  jwt: `eyJhbGciOiJIUzI1NiJ9.${rep('eyJzdWIiOiIxIn0', 2)}.${rep('c2lnbmF0dXJl', 3)}`,
  bearer: `tok_${rep('live', 10)}`,
  azureKey: rep('0f3a', 8),
  password: 'hunter2-correct-horse',
};

/** How each secret appears in a provider message when it cannot be recognised by its shape alone. */
const CONTEXT: Record<string, string> = { bearer: 'Bearer ', azureKey: 'api-key: ', password: 'password=' };

describe(sanitizeProviderMessage.name, () => {
  it.each([
    ['an OpenAI project key', `Incorrect API key provided: ${SECRETS.openai}.`, 'Incorrect API key provided: sk-***.'],
    ['a legacy OpenAI key', `invalid key ${SECRETS.openaiLegacy}`, 'invalid key sk-***'],
    [
      'an Anthropic key',
      `authentication_error: ${SECRETS.anthropic} is invalid`,
      'authentication_error: sk-ant-*** is invalid',
    ],
    ['an AWS access key id', `The security token ${SECRETS.awsKeyId} is invalid`, 'The security token *** is invalid'],
    [
      'an AWS temporary key id',
      `Credential=${SECRETS.awsTempKeyId}/20250101/us-east-1`,
      'Credential=***/20250101/us-east-1',
    ],
    ['an AWS secret access key', `secret ${SECRETS.awsSecret} rejected`, 'secret *** rejected'],
    ['a Google OAuth token', `token ${SECRETS.google} expired`, 'token ya29.*** expired'],
    ['a Google API key', `API key not valid: ${SECRETS.googleApiKey}`, 'API key not valid: ***'],
    ['a JWT', `bad assertion ${SECRETS.jwt} rejected`, 'bad assertion *** rejected'],
    ['a Bearer token', `Authorization: Bearer ${SECRETS.bearer}`, 'Authorization: Bearer ***'],
    ['an api-key header', `api-key: ${SECRETS.azureKey} is not valid`, 'api-key: *** is not valid'],
    ['an x-api-key JSON field', `{"x-api-key": "${SECRETS.azureKey}"}`, '{"x-api-key": "***"}'],
    ['a key= value', `request failed key=${SECRETS.azureKey}`, 'request failed key=***'],
    ['a password field', `password=${SECRETS.password} denied`, 'password=*** denied'],
    [
      'credentials in a URL',
      `connect to https://admin:${SECRETS.password}@gw.example.com/v1 failed`,
      'connect to https://***@gw.example.com/v1 failed',
    ],
    [
      'query-string secrets',
      `GET https://generativelanguage.googleapis.com/v1/models?key=${SECRETS.azureKey}&alt=sse 403`,
      'GET https://generativelanguage.googleapis.com/v1/models?key=***&alt=sse 403',
    ],
    [
      'a presigned AWS URL',
      `https://b.s3.amazonaws.com/o?X-Amz-Credential=abc&X-Amz-Signature=${SECRETS.azureKey}`,
      'https://b.s3.amazonaws.com/o?X-Amz-Credential=***&X-Amz-Signature=***',
    ],
  ])('removes %s', (_label, input, expected) => {
    expect(sanitizeProviderMessage(input)).toBe(expected);
  });

  it('removes every planted secret from one message', () => {
    const message = Object.entries(SECRETS)
      .map(([name, value]) => `${CONTEXT[name] ?? ''}${value}`)
      .join('\n');
    const clean = sanitizeProviderMessage(message);
    for (const value of Object.values(SECRETS)) {
      expect(clean).not.toContain(value);
      expect(clean).not.toContain(value.slice(6, 20));
    }
  });

  it.each([
    ['a context overflow', 'prompt is too long: 210000 tokens > 200000 maximum'],
    [
      'an OpenAI overflow',
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    ],
    ['a content filter', 'The response was filtered due to the prompt triggering content management policy.'],
    ['a request id', 'request_id=req_011CSHoEeqs5C35K2UUqR7Fy failed'],
    ['a max_tokens figure', 'max_tokens: 4096 > 4000'],
  ])('leaves %s readable', (_label, message) => {
    expect(sanitizeProviderMessage(message)).toBe(message);
  });

  it('collapses whitespace to single spaces and trims', () => {
    expect(sanitizeProviderMessage('  rate\n\n limited\t\tretry   later ')).toBe('rate limited retry later');
  });

  it('cuts a long message to 500 characters ending in an ellipsis', () => {
    const clean = sanitizeProviderMessage('x '.repeat(2000));
    expect(clean).toHaveLength(MAX_PROVIDER_MESSAGE_CHARS);
    expect(clean.endsWith('…')).toBe(true);
  });

  it('leaves no half secret when a huge message is cut', () => {
    const message = `${' '.repeat(19990)}${SECRETS.openai}`;
    expect(sanitizeProviderMessage(message)).toBe('');
  });

  it('returns an empty string for an empty message', () => {
    expect(sanitizeProviderMessage('')).toBe('');
  });
});
