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
  // A spec that fails half-way can leave a client of a server it started (or killed) open; the run must end
  // with its failure, not wait on that handle until CI's time limit.
  forceExit: true,
};
