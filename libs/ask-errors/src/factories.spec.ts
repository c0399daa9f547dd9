import {
  contextOverflow,
  embeddingNotConfigured,
  internalError,
  invalidRequest,
  llmNotConfigured,
  llmSynthesisFailed,
  llmUpstream,
  notFound,
  QUESTION_OVERFLOW_MESSAGE,
  questionOverflow,
  rateLimited,
  unauthorized,
} from './factories';
import { DASHBOARD_COPY } from './codes';

describe(questionOverflow.name, () => {
  it('says the question alone is too large and names its size and the disclosed prompt', () => {
    const err = questionOverflow({ model: 'my model', window: 8192, maxTokens: 1024, question: 11520, prompt: 11580 });
    expect(err.status).toBe(413);
    expect(err.toBody()).toEqual({
      error: QUESTION_OVERFLOW_MESSAGE,
      code: 'context_overflow',
      details: 'model=my_model window=8192 maxTokens=1024 question=11520 prompt=11580',
    });
    expect(QUESTION_OVERFLOW_MESSAGE).toBe("the question alone is too large for the model's context window");
    expect(questionOverflow({ model: 'm', window: 10, maxTokens: 2, question: 9 }).details).toBe(
      'model=m window=10 maxTokens=2 question=9',
    );
  });
});

describe(contextOverflow.name, () => {
  it("produces the seed's sample 413 body exactly", () => {
    const err = contextOverflow({ model: 'claude-sonnet-4-6', window: 200000, question: 12, rag: 1200, knowledge: 0 });
    expect(err.status).toBe(413);
    expect(err.toBody()).toEqual({
      error: "this conversation has grown past the model's context window",
      code: 'context_overflow',
      details: 'model=claude-sonnet-4-6 window=200000 question=12 rag=1200 knowledge=0',
    });
    expect(err.userMessage).toBe(
      "This conversation has grown past the model's context window. Start a new chat, or switch to a model with a wider context window.",
    );
  });

  it('keeps details one token per field when a model id has spaces', () => {
    expect(contextOverflow({ model: 'my model', window: 1, question: 2, rag: 3, knowledge: 4 }).details).toBe(
      'model=my_model window=1 question=2 rag=3 knowledge=4',
    );
  });
});

describe(llmUpstream.name, () => {
  it('is a 502 with the sanitised provider message in details', () => {
    const err = llmUpstream('429 rate limit exceeded for key sk-proj-abcdefghijklmnop1234');
    expect(err.toEvent()).toEqual({
      status: 502,
      code: 'llm_upstream',
      error: 'the llm provider rejected the request',
      details: '429 rate limit exceeded for key sk-***',
    });
    expect(err.userMessage).toBe(DASHBOARD_COPY.llm_upstream);
  });

  it('is a 504 when the call was cancelled or timed out, with the same dashboard copy', () => {
    const err = llmUpstream('deadline exceeded after 60000 ms', { timeout: true });
    expect(err.toEvent()).toEqual({
      status: 504,
      code: 'llm_upstream',
      error: 'the llm provider did not answer in time',
      details: 'deadline exceeded after 60000 ms',
    });
    expect(err.userMessage).toBe(DASHBOARD_COPY.llm_upstream);
  });
});

describe('error factories', () => {
  it.each([
    ['embeddingNotConfigured', embeddingNotConfigured(), 412, 'embedding_not_configured', undefined],
    ['llmNotConfigured', llmNotConfigured(), 412, 'llm_not_configured', undefined],
    [
      'llmNotConfigured with details',
      llmNotConfigured('provider=openai: bad key sk-abcdefghijkl'),
      412,
      'llm_not_configured',
      'provider=openai: bad key sk-***',
    ],
    ['llmSynthesisFailed', llmSynthesisFailed('stream ended early'), 500, 'llm_synthesis_failed', 'stream ended early'],
    ['llmSynthesisFailed with blank details', llmSynthesisFailed('   '), 500, 'llm_synthesis_failed', undefined],
    [
      'invalidRequest',
      invalidRequest('question must not be empty'),
      400,
      'invalid_request',
      'question must not be empty',
    ],
    ['unauthorized', unauthorized(), 401, 'unauthorized', undefined],
    ['notFound', notFound('project p-1'), 404, 'not_found', 'project p-1'],
    ['rateLimited', rateLimited(30), 429, 'rate_limited', 'retry_after=30'],
    ['internalError', internalError('e-9'), 500, 'internal_error', 'error_id=e-9'],
  ])('%s gives %i %s', (_label, err, status, code, details) => {
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.details).toBe(details);
    expect(err.userMessage).toBe(DASHBOARD_COPY[err.code]);
  });
});
