/** End-to-end specs: the real AppModule against real PostgreSQL, Redis and HTTP receivers. */
module.exports = {
  rootDir: '..',
  testEnvironment: 'node',
  testRegex: 'test/.*\\.e2e-spec\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: { '^src/(.*)$': '<rootDir>/src/$1' },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  // On a parallel run, each worker's spec files get a database and queue prefix of their own.
  setupFiles: ['<rootDir>/test/setup/worker-env.ts'],
  // Each spec file starts with no pending event or queue job left by an earlier one.
  setupFilesAfterEnv: ['<rootDir>/test/setup/spec-isolation.ts'],
  testTimeout: 60000,
};
