import { createAccount, createVerificationInStatus } from './helpers/factories';
import { onServer, ownDatabase } from './helpers/own-database';
import { waitFor } from './helpers/poll';
import { startApp } from './helpers/test-app';

/**
 * A connection of the primary pool that lands on a server that is not the primary (a proxy still
 * routing to a demoted primary during a failover) is refused: no write, and no primary read, goes
 * there; the routes answer 503, never 500, and the service recovers by itself once the primary
 * answers. The server here is a real PostgreSQL database made read-only for new sessions
 * (`default_transaction_read_only`), which a standby is too (`transaction_read_only` is on there).
 */
describe('a primary URL that reaches a read-only server', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  // From the server's maintenance database: a session of the read-only one could not undo it.
  const alter = (sql: string): Promise<void> =>
    onServer(database.url, sql.replace('$db', `"${new URL(database.url).pathname.slice(1)}"`));
  beforeAll(async () => {
    database = await ownDatabase('read_only');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('refuses it with 503 on every route, then recovers by itself when the server takes writes again', async () => {
    const env = { DATABASE_URL: database.url, APP_ROLE: 'api', RATE_LIMIT_PER_MINUTE: '0' };
    const writable = await startApp(env);
    const account = await createAccount(writable, { webhook_url: null });
    const verification = await createVerificationInStatus(writable, account.id, 'processing');
    await writable.close();

    await alter('ALTER DATABASE $db SET default_transaction_read_only = on');
    const t = await startApp(env);
    try {
      const auth = `Bearer ${account.secret}`;
      const ready = await t.http.get('/health/ready');
      expect({ status: ready.status, details: ready.body.error?.details }).toEqual({
        status: 503,
        details: [{ field: 'postgres', issue: 'down' }],
      });
      const answers = [
        await t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth),
        await t.http.get(`/api/v1/public/kyc/verifications/${verification.id}`).set('authorization', auth),
        await t.http
          .post('/api/v1/admin/accounts')
          .set('authorization', `Bearer ${t.adminToken}`)
          .send({ name: 'refused' }),
        await t.http
          .post(`/api/v1/internal/kyc/verifications/${verification.id}/transitions`)
          .set('authorization', `Bearer ${t.internalToken}`)
          .send({ status: 'approved' }),
      ];
      expect(answers.map((res) => [res.status, res.body.error?.code])).toEqual(
        answers.map(() => [503, 'service_unavailable']),
      );
      expect(t.output.join('')).not.toMatch(/internal_error/);

      await alter('ALTER DATABASE $db RESET default_transaction_read_only');
      await waitFor(
        async () => (await t.http.get('/health/ready')).status,
        (status) => status === 200,
        'ready once the server takes writes',
      );
      const moved = await t.http
        .post(`/api/v1/internal/kyc/verifications/${verification.id}/transitions`)
        .set('authorization', `Bearer ${t.internalToken}`)
        .send({ status: 'approved' });
      expect([moved.status, moved.body.version]).toEqual([200, 3]);
    } finally {
      await t.close();
    }
  });
});
