// Lint rules for the whole repository: the recommended sets, type-aware checks where a
// mistake is silent at run time (a promise nobody awaits, a promise where a callback
// returns void), type-only imports spelled as such, and one import order. Formatting is
// prettier's job (.prettierrc.json); `npm run lint` runs both checks, `npm test` runs it
// through test/unit/architecture/lint.test.ts.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'bench/results/', 'chaos/results/', 'eval/results/', 'tmp/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // The sanitizers and the protocol checks match NUL, ESC and other control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // The inspector's script runs in the browser.
    files: ['src/api/inspect/assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Type-aware rules on the product's sources only: they need the type checker, which
    // costs most of the lint's time; tests, bench and chaos get the syntactic rules.
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
);
