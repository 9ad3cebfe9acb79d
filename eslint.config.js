// ESLint (`npm run lint`): typescript-eslint's type-checked rules over every TypeScript file. Formatting is Biome's
// (biome.json), so no rule here is about layout. `typescript` resolves to TypeScript 6's API package, which
// typescript-eslint needs; `tsc` is TypeScript 7 (package.json's `@typescript/native`).
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(globalIgnores(['dist/', '.testbed/']), {
  files: ['{src,test,bench,hack,kustomize}/**/*.ts'],
  extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
  languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  rules: {
    // A controller of async I/O: a promise nobody awaits or handles loses its error (recommendedTypeChecked has
    // no-floating-promises and no-misused-promises; they are named so that no later base change drops them).
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
    // A switch over a union names every member, or has a default: a new phase or state is not silently skipped.
    '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    // One style for private members: ECMAScript `#name`. TypeScript's `private` is erased on emit (a cast or
    // `x['name']` still reaches it, and so do spreads and JSON.stringify); `#name` is private at run time as well.
    'no-restricted-syntax': [
      'error',
      {
        selector:
          ':matches(PropertyDefinition, MethodDefinition, AccessorProperty, TSParameterProperty)[accessibility="private"]',
        message:
          'Use an ECMAScript private member (`#name`), not `private`: it is private at run time too, and the code base uses one style.',
      },
    ],
    // Relaxed to match only-throw-error's default: a caught value (of type unknown) may be passed on unchanged.
    '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    // Relaxed: callbacks that must return a promise (waitFor and eventually predicates, queue handlers, SDK stubs)
    // are written `async` so that a throw becomes a rejection; an await in each would say nothing.
    '@typescript-eslint/require-await': 'off',
    // Relaxed: `_`-prefixed names are unused on purpose (a positional parameter, a field dropped by destructuring),
    // and so are the siblings of a rest element (`const { a, b, ...rest } = x` takes rest without a and b).
    '@typescript-eslint/no-unused-vars': [
      'error',
      { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
    ],
  },
});
