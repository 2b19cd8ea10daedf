/** Fault-injection suite: spawned service processes, an own redis-server, TCP proxies; slower than e2e. */
module.exports = {
  rootDir: '../..',
  testEnvironment: 'node',
  testRegex: 'test/faults/.*\\.faults-spec\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: { '^src/(.*)$': '<rootDir>/src/$1' },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 180000,
};
