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
};
