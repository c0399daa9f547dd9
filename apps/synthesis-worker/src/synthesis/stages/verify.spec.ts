import { randomBytes } from 'node:crypto';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { loadedTurn } from '../../testing/stage-turn';
import { firstPlan } from './plan';
import { verifyWithCountEndpoint } from './verify';

// Integration: the verify stage on the harness (throwaway database, Redis, the fake upstream's count endpoints).
describe(verifyWithCountEndpoint.name, () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'verify-stage', encryptionKey: randomBytes(32).toString('hex') });
  });
  afterAll(() => harness.close());

  const anthropic = () => ({
    provider: 'anthropic' as const,
    model: 'claude-sonnet-4-6',
    baseUrl: harness.upstream.url,
    maxTokens: 1024,
  });
  const counted = (since: number) =>
    harness.upstream.requests
      .slice(since)
      .filter((r) => r.route.endsWith('count_tokens') || r.route.endsWith('.count'));
  const rows = async (askId: string) =>
    (await harness.calls.forAsk(askId)).map((c) => [c.operation, c.purpose, c.plannedTokens, c.errorCode]);

  it('sends the plan as it is, with no call, when the counter is not a remote one', async () => {
    const { turn, deps, call } = await loadedTurn(harness, { provider: 'local', model: 'local' }, { ledger: true });
    const { sized } = firstPlan(turn.planInput);
    const before = harness.upstream.requests.length;
    const verified = await verifyWithCountEndpoint(deps, turn, sized, new AbortController().signal, call('count'));
    expect(verified).toEqual({ sized });
    expect(verified.sized).toBe(sized);
    expect([harness.upstream.requests.length - before, await rows(turn.data.askId)]).toEqual([0, []]);
  });

  it('counts the assembled request at the provider and keeps a plan that fits, one count_tokens row', async () => {
    const { turn, deps, call } = await loadedTurn(harness, anthropic(), { ledger: true });
    const { sized } = firstPlan(turn.planInput);
    const before = harness.upstream.requests.length;
    const verified = await verifyWithCountEndpoint(deps, turn, sized, new AbortController().signal, call('count'));
    expect(verified.overflow).toBeUndefined();
    expect(verified.sized).toBe(sized);
    expect(counted(before)).toHaveLength(1);
    expect(await rows(turn.data.askId)).toEqual([['count_tokens', 'count', sized.plan.used, null]]);
  });

  it('hands back the overflow the count endpoint reported, its row a context_overflow', async () => {
    const { turn, deps, call } = await loadedTurn(harness, anthropic(), { ledger: true });
    const { sized } = firstPlan(turn.planInput);
    harness.upstream.setFault({ kind: 'overflow', endpoint: 'count', promptTokens: 9_000_000, window: 200_000 }, 1);
    const verified = await verifyWithCountEndpoint(deps, turn, sized, new AbortController().signal, call('count'));
    expect(verified.sized).toBe(sized);
    expect(verified.overflow).toEqual({
      kind: 'overflow',
      limit: 200_000,
      actual: 9_000_000,
      promptTokens: 9_000_000,
      message: 'prompt is too long: 9000000 tokens > 200000 maximum',
    });
    expect(await rows(turn.data.askId)).toEqual([['count_tokens', 'count', sized.plan.used, 'context_overflow']]);
  });

  it('ends with the typed 502 after the rate limits retried within bounds, one row per attempt', async () => {
    const { turn, deps, call } = await loadedTurn(harness, anthropic(), { ledger: true });
    const { sized } = firstPlan(turn.planInput);
    harness.upstream.setFault({ kind: '429', retryAfterSeconds: 0, endpoint: 'count' }, 3);
    await expect(
      verifyWithCountEndpoint(deps, turn, sized, new AbortController().signal, call('count')),
    ).rejects.toMatchObject({ status: 502, code: 'llm_upstream' });
    // Three attempts of the 122-token plan, each refused with a 429: three rows.
    expect(sized.plan.used).toBe(122);
    expect(await rows(turn.data.askId)).toEqual([
      ['count_tokens', 'count', 122, 'llm_upstream'],
      ['count_tokens', 'count', 122, 'llm_upstream'],
      ['count_tokens', 'count', 122, 'llm_upstream'],
    ]);
    harness.upstream.clearFaults();
  });
});
