import { modelMetricLabel, OTHER_MODEL_LABEL } from './metric-label';

describe(modelMetricLabel.name, () => {
  it.each([
    ['anthropic', 'claude-sonnet-4-6', 'claude-4'],
    ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-4'],
    ['openai', 'gpt-4o', 'gpt-4o'],
    ['local', 'anything-at-all', 'local'],
    ['openai', 'ft:gpt-4o-mini:acme-corp:merger-project-falcon:AbC123', OTHER_MODEL_LABEL],
    ['openai', 'my-private-deployment', OTHER_MODEL_LABEL],
    ['local-semantic', 'multilingual-e5-small', OTHER_MODEL_LABEL],
  ])('labels %s model %s as %s', (provider, model, label) => {
    expect(modelMetricLabel({ provider, model })).toBe(label);
  });

  it('gives at most one label per catalog row plus `other` for any number of tenant names', () => {
    const labels = new Set(
      Array.from({ length: 1_000 }, (_, i) => modelMetricLabel({ provider: 'openai', model: `tenant-model-${i}` })),
    );
    expect([...labels]).toEqual([OTHER_MODEL_LABEL]);
  });
});
