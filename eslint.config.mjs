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
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
];
