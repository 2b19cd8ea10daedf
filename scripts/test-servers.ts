// The PostgreSQL and Redis servers every test run uses, shared by test/setup (Jest) and scripts/client-check.ts.
// A run never uses these databases or keys as they are: it creates `kyc_test_<run>` on the PostgreSQL server (through
// the database the URL names, `postgres` by default) and a queue prefix of its own on Redis, and removes both after.

/** TEST_DATABASE_URL: a PostgreSQL server and a database on it to run CREATE/DROP DATABASE from. */
export function testDatabaseServerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** TEST_REDIS_URL: the Redis server for the run's queues. */
export function testRedisUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
}

/** The run's own database on the test server: the server URL with its database name replaced. */
export function testDatabaseUrl(databaseName: string, env: NodeJS.ProcessEnv = process.env): string {
  const url = new URL(testDatabaseServerUrl(env));
  url.pathname = `/${databaseName}`;
  return url.toString();
}
