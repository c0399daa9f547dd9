import { AskErrorCode } from '@ask/ask-errors';
import { toAskError } from './to-ask-error';

describe('toAskError', () => {
  it('maps an overflow (after the re-budgeted retry) to 413 context_overflow with the seed figures', () => {
    const err = toAskError(
      { kind: 'overflow', limit: 200000, actual: 208310, message: 'prompt is too long' },
      { overflow: { model: 'claude-sonnet-4-6', window: 200000, question: 12, rag: 1200, knowledge: 0 } },
    );
    expect(err.toEvent()).toEqual({
      status: 413,
      code: AskErrorCode.ContextOverflow,
      error: "this conversation has grown past the model's context window",
      details: 'model=claude-sonnet-4-6 window=200000 question=12 rag=1200 knowledge=0',
    });
  });

  it('uses the disclosed limit when no figures are given', () => {
    expect(toAskError({ kind: 'overflow', limit: 4096, message: 'x' }, { model: 'llama3.1:8b' }).details).toBe(
      'model=llama3.1:8b window=4096 question=0 rag=0 knowledge=0',
    );
  });

  it('maps fatal and exhausted retryable failures to 502 llm_upstream with sanitised details', () => {
    expect(
      toAskError({ kind: 'fatal', status: 400, message: 'content filtered key=sk-abcdefghijklmnop' }).toEvent(),
    ).toEqual({
      status: 502,
      code: AskErrorCode.LlmUpstream,
      error: 'the llm provider rejected the request',
      details: 'status=400 content filtered key=***',
    });
    expect(toAskError({ kind: 'retryable', status: 429, retryAfterMs: 1000, message: 'slow down' }).status).toBe(502);
  });

  it('maps a timeout to 504 llm_upstream and unknown to 500 llm_synthesis_failed', () => {
    expect(toAskError({ kind: 'timeout' })).toMatchObject({ status: 504, code: AskErrorCode.LlmUpstream });
    expect(toAskError({ kind: 'unknown', message: 'boom' })).toMatchObject({
      status: 500,
      code: AskErrorCode.LlmSynthesisFailed,
      details: 'boom',
    });
  });
});
