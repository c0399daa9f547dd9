import { embeddingDimensionsMismatch } from '@ask/ask-errors';
import { CallNotRecordedError, EmbeddingSpaceMismatchError } from '@ask/persistence';
import { isCallNotRecorded, isEmbeddingSpaceMismatch } from './ports';

// The ports recognise the data layer's errors without importing it: these pin the names and codes.
describe(isEmbeddingSpaceMismatch.name, () => {
  it('recognises the data layer’s refusal of another space, with the spaces it names', () => {
    const err = new EmbeddingSpaceMismatchError('p', [{ model: 'local/a', dimensions: 3 }], {
      model: 'local/b',
      dimensions: 4,
    });
    expect(isEmbeddingSpaceMismatch(err)).toBe(true);
  });

  it('does not take a provider’s vector of the wrong length (502, the same code) for one', () => {
    const err = embeddingDimensionsMismatch('local', { vectors: 1, dimensions: 3 }, { vectors: 1, dimensions: 4 });
    expect([err.code, isEmbeddingSpaceMismatch(err)]).toEqual(['embedding_dimensions_mismatch', false]);
  });
});

describe(isCallNotRecorded.name, () => {
  it('recognises the ledger’s CallNotRecordedError and nothing else', () => {
    expect([isCallNotRecorded(new CallNotRecordedError(new Error('pool'))), isCallNotRecorded(new Error('x'))]).toEqual(
      [true, false],
    );
  });
});
