// Flat config: typescript-eslint (type-aware off for speed) + react-hooks for the React code.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import importX from 'eslint-plugin-import-x'
import { layerWalls, packageWalls } from './eslint.walls.js'

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/coverage/**',
      '.cache/**',
      'e2e/artifacts/**',
      'apps/workbench/public/**',
      'interop/page-dist/**',
      '**/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.browser },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['packages/react/**/*.{ts,tsx}', 'apps/workbench/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // The core of @interlude/react must stay framework-free.
    files: ['packages/react/src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['react', 'react-dom', 'react/*', 'react-dom/*'] }],
    },
  },
  {
    // @interlude/client runs in browsers, Deno and Workers too: no Node built-ins outside its tests.
    files: ['packages/client/src/**/*.ts'],
    ignores: ['packages/client/src/**/*.test.ts', 'packages/client/src/test-utils/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: '@interlude/client uses fetch and web APIs only.' }] },
      ],
    },
  },
  ...packageWalls,
  {
    // Import walls inside the agent server (docs/architecture.md#layers): nothing imports upward. Tests and test
    // harnesses may reach across layers.
    files: ['packages/agent-server/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/agent-server/src/test-utils/**'],
    plugins: { 'import-x': importX },
    // basePath: zones are repository paths, whichever folder ESLint runs from.
    rules: { 'import-x/no-restricted-paths': ['error', { zones: layerWalls, basePath: import.meta.dirname }] },
  },
)
