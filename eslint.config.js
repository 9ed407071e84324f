// ESLint for the TypeScript sources, tests, benchmarks, examples and the page, and for the few
// plain JavaScript build scripts. `npm run lint` runs it; .ci/run fails on any error.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'packages/*/dist/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        // Type-aware rules read the types of the program that tsconfig.check.json describes
        // (src, test, bench, scripts, examples); the page has its own (browser) tsconfig.
        project: ['./tsconfig.check.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its rejection: the error surfaces as an unhandled
      // rejection (or not at all) instead of where it happened. `void promise` marks the few
      // that are meant to run on their own.
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return a promise the runner itself awaits.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      // An async function passed where a plain callback is expected (an event listener, a
      // forEach) has its rejection dropped the same way.
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      // Awaiting something that is not a promise is almost always a forgotten call.
      '@typescript-eslint/await-thenable': 'error',
      // `_name` marks a parameter a signature needs but the body does not use.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      // A callback declared before the value it reads is assigned (a closure called later) is
      // the one way to wire two objects that need each other.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Kysely's own advice: a migration takes Kysely<any>, because it must keep working when the
    // schema type of today's code has moved on.
    files: ['src/store/migrations/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read wire JSON (model request bodies, a command's data part, the card) and the SDK's
    // payload unions, and check each value with the assertion right after; typing every shape
    // they poke at would double the fixtures without catching more. Everything else keeps `any`
    // an error.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['web/src/**/*.ts'],
    languageOptions: { parserOptions: { project: ['./web/tsconfig.json'] } },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
);
