import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { describeValidationErrors } from '../errors/validation';
import { EmbeddingSettingsDto } from './project.dto';

/** The `details` the gateway's validation pipe would answer for an embedding settings body. */
const details = async (body: object) =>
  describeValidationErrors(
    await validate(plainToInstance(EmbeddingSettingsDto, body), { stopAtFirstError: true, whitelist: true }),
  );

describe(EmbeddingSettingsDto.name, () => {
  it('reports a missing dimensions field as missing, not as over the maximum', async () => {
    expect(await details({ provider: 'local', model: 'local-lexical-v1' })).toEqual([
      'dimensions: dimensions is required: the embedding vector size (e.g. 256 for local-lexical-v1)',
    ]);
  });

  it.each([
    [5000, 'dimensions: dimensions must not be greater than 4096'],
    [4, 'dimensions: dimensions must not be less than 8'],
    [25.5, 'dimensions: dimensions must be an integer number'],
  ])('still names the bound a present value breaks (%p)', async (dimensions, message) => {
    expect(await details({ provider: 'local', model: 'local-lexical-v1', dimensions })).toEqual([message]);
  });

  it('accepts a whole body', async () => {
    expect(await details({ provider: 'local', model: 'local-lexical-v1', dimensions: 256 })).toEqual([]);
  });
});
