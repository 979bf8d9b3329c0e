// Type-aware linting (typescript-eslint needs TypeScript's compiler API: the reason the repo stays on TS 6).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ENV_RULE = {
  'no-restricted-properties': [
    'error',
    {
      object: 'process',
      property: 'env',
      message: 'Read settings through ConfigService (src/config): the environment is validated once, at boot.',
    },
  ],
};

export default tseslint.config(
  {
    ignores: ['**/node_modules/', '**/dist/', 'src/generated/', '.data/', '.tmp/', 'coverage/', 'bench/results/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['prisma.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      curly: 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A `let` assigned once but read earlier by a closure (a callback built before its target exists) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      ...ENV_RULE,
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'URL',
          'URLSearchParams',
          'Buffer',
          'fetch',
          'performance',
          'AbortController',
          'AbortSignal',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'setImmediate',
          'structuredClone',
          'TextEncoder',
          'TextDecoder',
        ].map((g) => [g, 'readonly']),
      ),
    },
    rules: { curly: 'error', eqeqeq: ['error', 'always', { null: 'ignore' }] },
  },
  {
    // Tests may poke at loosely typed values (fixtures, raw JSON bodies).
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', 'test/**', 'apps/*/test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The console runs in the browser: no process.env there (Vite would inline it).
    files: ['apps/console/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // The places allowed to read the environment: configuration, tooling, benchmarks, test harness, agent CLI.
    files: ['src/config/**', 'scripts/**', 'bench/**', 'test/support/**', 'apps/agent/src/cli.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
