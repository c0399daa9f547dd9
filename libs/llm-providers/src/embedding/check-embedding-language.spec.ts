import { AskError } from '@ask/ask-errors';
import { LocalEmbeddingProvider } from '../local/local-embedding.provider';
import { LocalSemanticEmbeddingProvider } from '../local/local-semantic-embedding.provider';
import { checkEmbeddingLanguage, detectLanguages } from './check-embedding-language';
import udhr from './fixtures/udhr-preamble.json';

const englishOnly = new LocalSemanticEmbeddingProvider();
const caught = (fn: () => void): AskError | undefined => {
  try {
    fn();
  } catch (err) {
    return err as AskError;
  }
  return undefined;
};

describe('checkEmbeddingLanguage', () => {
  it('passes English knowledge for an English-only model', () => {
    expect(() => checkEmbeddingLanguage(englishOnly, udhr.eng)).not.toThrow();
  });

  it.each([
    ['deu_1996', 'German', 'de'],
    ['cmn_hans', 'Chinese', 'zh'],
    ['spa', 'Spanish', 'es'],
    ['fra', 'French', 'fr'],
    ['rus', 'Russian', 'ru'],
  ] as const)('refuses %s knowledge with a 400 naming %s and the alternatives', (key, name, code) => {
    const err = caught(() => checkEmbeddingLanguage(englishOnly, udhr[key]));
    expect(err).toBeInstanceOf(AskError);
    expect(err?.status).toBe(400);
    expect(err?.code).toBe('invalid_request');
    expect(err?.details).toContain(`knowledge is mostly ${name} (${code}: 100% of`);
    expect(err?.details).toContain('use-lite-512 (local-semantic) covers en only');
    expect(err?.details).toContain('embedding provider "local"');
    expect(err?.details).toContain('embedding.allowOtherLanguages');
  });

  it('passes knowledge that is mostly English with some German', () => {
    const mixed = [...udhr.eng, ...udhr.deu_1996.slice(0, 1)];
    expect(detectLanguages(mixed).byLanguage.de).toBeGreaterThan(0);
    expect(() => checkEmbeddingLanguage(englishOnly, mixed)).not.toThrow();
  });

  it('passes any language for a model without a language list, or when the project allows it', () => {
    expect(() => checkEmbeddingLanguage(new LocalEmbeddingProvider(), udhr.cmn_hans)).not.toThrow();
    expect(() =>
      checkEmbeddingLanguage(new LocalSemanticEmbeddingProvider({ allowOtherLanguages: true }), udhr.cmn_hans),
    ).not.toThrow();
  });

  it('looks at no more than 200,000 characters, 2,000 of each text', () => {
    const huge = Array.from({ length: 500 }, () => udhr.deu_1996.join(' ').repeat(4));
    const share = detectLanguages(huge);
    expect(share.sampledCharacters).toBe(200_000);
    expect(share.byLanguage).toEqual({ de: 200_000 });
  });
});
