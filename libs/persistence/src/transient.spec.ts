import { isTransientDbError, withTransientRetry } from './transient';

describe('isTransientDbError', () => {
  it.each([
    ['too many connections (53300)', Object.assign(new Error('sorry, too many clients already'), { code: '53300' })],
    ['shutting down (57P01), on driverError', Object.assign(new Error('x'), { driverError: { code: '57P01' } })],
    ['a refused socket', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ["pg-pool's connect timeout", new Error('timeout exceeded when trying to connect')],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
  ])('is true for %s', (_, error) => expect(isTransientDbError(error)).toBe(true));

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a check violation', Object.assign(new Error('violates check'), { code: '23514' })],
    ['nothing', undefined],
  ])('is false for %s', (_, error) => expect(isTransientDbError(error)).toBe(false));
});

describe('withTransientRetry', () => {
  const tooMany = () => Object.assign(new Error('sorry, too many clients already'), { code: '53300' });

  it('retries a transient failure until the write succeeds', async () => {
    let tries = 0;
    const result = await withTransientRetry(
      async () => {
        tries += 1;
        if (tries < 3) throw tooMany();
        return 'written';
      },
      { attempts: 5, firstDelayMs: 1 },
    );
    expect([result, tries]).toEqual(['written', 3]);
  });

  it('throws the last transient failure after its attempts, and any other failure at once', async () => {
    let tries = 0;
    await expect(
      withTransientRetry(
        async () => {
          tries += 1;
          throw tooMany();
        },
        { attempts: 4, firstDelayMs: 1 },
      ),
    ).rejects.toThrow('sorry, too many clients already');
    expect(tries).toBe(4);
    tries = 0;
    await expect(
      withTransientRetry(
        async () => {
          tries += 1;
          throw Object.assign(new Error('duplicate key'), { code: '23505' });
        },
        { attempts: 4, firstDelayMs: 1 },
      ),
    ).rejects.toThrow('duplicate key');
    expect(tries).toBe(1);
  });
});
