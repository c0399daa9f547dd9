import nx from '@nx/eslint-plugin';

// One spelling per word in identifiers: the majority's (summarise 254 vs summarize 41; normalize 61 vs
// normalise 39 when counted); the rename landed, so `npx nx run-many -t lint` keeps it. Strings and comments are not checked (provider fields and quotes keep their own spelling).
const ONE_SPELLING = 'error';
const SPELLINGS = [
  { selector: 'Identifier[name=/[Ss]ummariz/]', message: 'Spell it summarise (the code base spells it so).' },
  { selector: 'Identifier[name=/[Nn]ormalis/]', message: 'Spell it normalize (the code base spells it so).' },
];

// Comments keep the why, not a tracker's number: the tracker is not in the repo, so "issue 31" tells a
// reader nothing. Checked in every comment of non-spec sources (strings a bench writes into
// bench/RESULTS.md keep their text).
const TRACKER_NUMBER = /\bissues? #?\d+/i;
const house = {
  rules: {
    'no-tracker-numbers': {
      meta: {
        type: 'suggestion',
        schema: [],
        messages: { tracker: 'Say why in the comment itself: "{{text}}" points at a tracker that is not in the repo.' },
      },
      create(context) {
        return {
          Program() {
            for (const comment of context.sourceCode.getAllComments()) {
              const found = TRACKER_NUMBER.exec(comment.value);
              if (found) context.report({ loc: comment.loc, messageId: 'tracker', data: { text: found[0] } });
            }
          },
        };
      },
    },
  },
};

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { ignores: ['**/dist', '**/node_modules', '**/tmp', '**/out', 'apps/dashboard/public/**'] },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            // Apps may use any lib; libs never import apps.
            { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib'] },
            { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['scope:lib'] },
            { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib'] },
            // The benches (bench/, no production code) may use every lib and the test tools.
            { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
            // Pure libs (no Nest, no I/O) import only other pure libs, never an adapter. token-counting
            // is an adapter: it loads tokenizer files from installed packages on first use.
            { sourceTag: 'type:pure', onlyDependOnLibsWithTags: ['type:pure'] },
            { sourceTag: 'type:adapter', onlyDependOnLibsWithTags: ['type:pure', 'type:adapter'] },
            // The data layer (persistence: entities, repositories, the usage and embedding ledgers) is
            // imported by apps only, never by another lib: the service lib (ingestion: load, chunk,
            // embed, store) defines the ports it needs and the apps inject the repositories into them.
            { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:pure', 'type:adapter'] },
            { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:pure', 'type:adapter'] },
            { sourceTag: 'scope:lib', notDependOnLibsWithTags: ['type:data'] },
            // Test-only projects (scope:testing: libs/testing and the tools/fake-upstream, tools/stack
            // test tools) only where the block below allows them: production libs and apps (scope:lib,
            // scope:app) list only scope:lib above, so none of their files can import a test tool.
            { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
          ],
        },
      ],
      'no-restricted-syntax': [ONE_SPELLING, ...SPELLINGS],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Specs, e2e suites and their helpers may also import the test-only lib (tag scope:testing);
    // production files keep the rules above, so they cannot.
    files: [
      '**/*.spec.ts',
      '**/testing/**/*.ts',
      '**/testing.ts',
      // In-process harnesses that only specs import (apps/api-gateway/src/security/gateway-harness.ts).
      '**/*-harness.ts',
      'apps/ask-e2e/**/*.ts',
      'apps/dashboard/e2e/**/*.ts',
      // The CLI's `demo` command starts the local stack (tools/stack) for a person trying the service.
      'apps/ask-cli/src/commands/demo.command.ts',
    ],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
            { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
            { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
            { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
            { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
          ],
        },
      ],
    },
  },
  {
    // bench/ (tag scope:bench) under the same rules, with one named exception: a bench that measures an
    // app's own code in-process imports exactly these app files (Nx forbids importing an app project
    // otherwise). Every other import of bench/ is checked against the tags like any project's.
    files: ['bench/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [
            '^../../apps/synthesis-worker/src/synthesis-worker.module$',
            '^../../apps/synthesis-worker/src/testing/synthesis-harness$',
            '^../../apps/ask-cli/src/commands/demo.command$',
            '^../../apps/ask-cli/src/commands/session.command$',
            '^../../apps/ask-cli/src/commands/eval.command$',
          ],
          depConstraints: [{ sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] }],
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts'],
    plugins: { house },
    rules: { 'house/no-tracker-numbers': 'error' },
  },
  {
    // Services write through the JSON logger (libs/observability), never straight to stdout/stderr: a
    // stray debug line reaches every operator's logs on every job (a `DBG acquire …` line once did).
    files: [
      'libs/*/src/**/*.ts',
      'apps/api-gateway/src/**/*.ts',
      'apps/retrieval-worker/src/**/*.ts',
      'apps/synthesis-worker/src/**/*.ts',
      'apps/ingestion-worker/src/**/*.ts',
    ],
    ignores: [
      '**/*.spec.ts',
      '**/testing/**/*.ts',
      '**/testing.ts',
      '**/*-harness.ts',
      'libs/observability/src/json-logger.ts',
      'libs/persistence/src/migrate.ts',
      // A boot failure before the logger exists.
      '**/src/main.ts',
    ],
    rules: {
      'no-console': 'error',
      // The spelling rules again: this block's list replaces the one above for these files.
      'no-restricted-syntax': [
        'error',
        ...SPELLINGS,
        {
          selector: "CallExpression[callee.object.object.name='process'][callee.property.name='write']",
          message: 'Log through the JSON logger, not process.stdout/stderr.',
        },
      ],
    },
  },
];
