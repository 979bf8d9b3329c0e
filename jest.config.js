// jest 30 in native-ESM mode (run with NODE_OPTIONS=--experimental-vm-modules): NestJS 12 is ESM-only.
// TypeScript is transformed by @swc/jest (no type-check: `npm run typecheck` does that).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2023',
    },
    module: { type: 'es6' },
  },
];

export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/libs', '<rootDir>/apps', '<rootDir>/scripts'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.int-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@tpfleet/board-api$': '<rootDir>/libs/board-api/src/index.ts',
    '^@tpfleet/board-api/routes$': '<rootDir>/libs/board-api/src/routes.ts',
    '^@tpfleet/board-api/client$': '<rootDir>/libs/board-api/src/client/index.ts',
    '^@tpfleet/board-api/version$': '<rootDir>/libs/board-api/src/version.ts',
    '^@tpfleet/agent$': '<rootDir>/apps/agent/src/index.ts',
    '^@tpfleet/fleet-api$': '<rootDir>/libs/fleet-api/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: { '^.+\\.ts$': swc },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
};
