import {
  ASK_ERROR_CODES,
  ASK_ERROR_STATUS,
  AskErrorCode,
  DASHBOARD_COPY,
  ERROR_MESSAGES,
  isAskErrorCode,
} from './codes';

describe('AskErrorCode', () => {
  it.each([
    // seed 000 "Typed errors" table, then the API's own codes
    ['embedding_not_configured', 412],
    ['llm_not_configured', 412],
    ['context_overflow', 413],
    ['llm_upstream', 502],
    ['llm_synthesis_failed', 500],
    ['invalid_request', 400],
    ['unauthorized', 401],
    ['not_found', 404],
    ['rate_limited', 429],
    ['internal_error', 500],
    ['embedding_space_changed', 409],
    ['embedding_auth_failed', 502],
    ['embedding_dimensions_mismatch', 502],
    ['embedding_upstream', 502],
    ['service_unavailable', 503],
  ])('has %s with status %i', (code, status) => {
    expect(ASK_ERROR_CODES).toContain(code);
    expect(ASK_ERROR_STATUS[code as AskErrorCode]).toBe(status);
  });

  it('has exactly sixteen codes', () => {
    expect(ASK_ERROR_CODES).toHaveLength(16);
  });
});

describe('DASHBOARD_COPY', () => {
  it.each([
    [
      AskErrorCode.EmbeddingNotConfigured,
      'This project has no embedding provider configured. Add one under project settings → Embedding to enable Ask.',
    ],
    [
      AskErrorCode.LlmNotConfigured,
      'This project has no LLM provider configured. Add one under project settings → LLM to enable Ask.',
    ],
    [
      AskErrorCode.ContextOverflow,
      "This conversation has grown past the model's context window. Start a new chat, or switch to a model with a wider context window.",
    ],
    [
      AskErrorCode.LlmUpstream,
      'The LLM provider rejected the request. Try again; if it keeps happening, check provider credentials and quota.',
    ],
    [
      AskErrorCode.LlmSynthesisFailed,
      'The LLM provider failed to answer this question. Try again, or start a new chat.',
    ],
  ])('gives %s the seed copy verbatim', (code, copy) => {
    expect(DASHBOARD_COPY[code]).toBe(copy);
  });

  it('has copy and a lowercase error message for every code', () => {
    for (const code of ASK_ERROR_CODES) {
      expect(DASHBOARD_COPY[code].length).toBeGreaterThan(10);
      expect(ERROR_MESSAGES[code]).toBe(ERROR_MESSAGES[code].toLowerCase());
    }
  });
});

describe(isAskErrorCode.name, () => {
  it.each([
    ['context_overflow', true],
    ['internal_error', true],
    ['CONTEXT_OVERFLOW', false],
    ['nope', false],
    [413, false],
    [undefined, false],
  ])('says %p is a code: %p', (value, expected) => {
    expect(isAskErrorCode(value)).toBe(expected);
  });
});
