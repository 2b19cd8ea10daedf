/** Scale-out on real engines: a Redis Cluster and a PostgreSQL streaming replica, started and ended by the tests. */
module.exports = {
  rootDir: '../..',
  testEnvironment: 'node',
  testRegex: 'test/scale/.*\\.scale-spec\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: { '^src/(.*)$': '<rootDir>/src/$1' },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 300000,
  // A spec that fails half-way can leave a client of a server it started (or killed) open; the run must end
  // with its failure, not wait on that handle until CI's time limit.
  forceExit: true,
};
