import nx from '@nx/eslint-plugin';

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
            // Pure libs (no Nest, no I/O) import only other pure libs, never an adapter.
            { sourceTag: 'type:pure', onlyDependOnLibsWithTags: ['type:pure'] },
            { sourceTag: 'type:adapter', onlyDependOnLibsWithTags: ['type:pure', 'type:adapter'] },
            // Test-only helpers (libs/testing) only where the block below allows them.
            { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
          ],
        },
      ],
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
          ],
        },
      ],
    },
  },
];
