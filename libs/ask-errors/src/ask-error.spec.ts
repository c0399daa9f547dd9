import { AskError, isAskError, toErrorEvent } from './ask-error';
import { AskErrorCode, DASHBOARD_COPY } from './codes';

describe(AskError.name, () => {
  it('defaults status, error and userMessage from the code', () => {
    const err = new AskError(AskErrorCode.ContextOverflow);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      name: 'AskError',
      status: 413,
      code: 'context_overflow',
      error: "this conversation has grown past the model's context window",
      userMessage: DASHBOARD_COPY[AskErrorCode.ContextOverflow],
    });
    expect(err.details).toBeUndefined();
  });

  describe('toBody', () => {
    it('omits details when unset', () => {
      expect(new AskError(AskErrorCode.NotFound).toBody()).toEqual({ error: 'not found', code: 'not_found' });
    });

    it('includes details when set', () => {
      expect(new AskError(AskErrorCode.InvalidRequest, { details: 'question: required' }).toBody()).toEqual({
        error: 'the request is invalid',
        code: 'invalid_request',
        details: 'question: required',
      });
    });
  });

  describe('toEvent', () => {
    it('adds the status to the body', () => {
      expect(new AskError(AskErrorCode.LlmUpstream, { status: 504 }).toEvent()).toEqual({
        status: 504,
        error: 'the llm provider rejected the request',
        code: 'llm_upstream',
      });
    });
  });

  describe('fromEvent', () => {
    it('rebuilds the error from its event', () => {
      const original = new AskError(AskErrorCode.ContextOverflow, {
        details: 'model=m window=1 question=2 rag=0 knowledge=0',
      });
      const rebuilt = AskError.fromEvent(original.toEvent());
      expect(rebuilt.toEvent()).toEqual(original.toEvent());
      expect(rebuilt.userMessage).toBe(original.userMessage);
    });

    it('turns an unknown code into internal_error without its text', () => {
      expect(AskError.fromEvent({ status: 418, code: 'teapot', error: 'secret stuff' }).toEvent()).toEqual({
        status: 500,
        code: 'internal_error',
        error: 'internal error',
      });
    });
  });

  it('keeps the cause for logs but never in the body', () => {
    const cause = new Error('db password=hunter2');
    const err = new AskError(AskErrorCode.InternalError, { cause });
    expect(err.cause).toBe(cause);
    expect(JSON.stringify(err.toBody())).not.toContain('hunter2');
  });
});

describe(isAskError.name, () => {
  it.each([
    ['an AskError', new AskError(AskErrorCode.NotFound), true],
    [
      'an AskError-shaped object from another module copy',
      { name: 'AskError', code: 'not_found', status: 404, toBody: () => ({}) },
      true,
    ],
    ['a plain Error', new Error('x'), false],
    ['an object with an unknown code', { name: 'AskError', code: 'x', status: 500, toBody: () => ({}) }, false],
    ['null', null, false],
    ['a string', 'context_overflow', false],
  ])('says %s is %p', (_label, value, expected) => {
    expect(isAskError(value)).toBe(expected);
  });
});

describe(toErrorEvent.name, () => {
  it('maps an AskError to its own event', () => {
    expect(toErrorEvent(new AskError(AskErrorCode.LlmNotConfigured, { details: 'provider=bedrock' }))).toEqual({
      status: 412,
      code: 'llm_not_configured',
      error: 'this project has no llm provider configured',
      details: 'provider=bedrock',
    });
  });

  it.each([
    ['an Error', new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2')],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('maps %s to a 500 internal_error with nothing leaked', (_label, thrown) => {
    const event = toErrorEvent(thrown);
    expect(event).toEqual({ status: 500, code: 'internal_error', error: 'internal error' });
  });

  it('puts the error id in details when given', () => {
    expect(toErrorEvent(new Error('x'), 'e-123')).toEqual({
      status: 500,
      code: 'internal_error',
      error: 'internal error',
      details: 'error_id=e-123',
    });
  });
});
