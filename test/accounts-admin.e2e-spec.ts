import { createAccount, type CreatedAccount } from './helpers/factories';
import { ISO_MS, LOWER_UUID, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

const ADMIN = '/api/v1/admin/accounts';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('admin accounts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = <T extends { set(name: string, value: string): T }>(req: T): T =>
    req.set('authorization', `Bearer ${t.adminToken}`);
  const authenticates = async (secret: string): Promise<number> =>
    (await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${secret}`)).status;
  const rotate = (id: string, body: object = {}) => admin(t.http.post(`${ADMIN}/${id}/secret/rotate`)).send(body);

  describe('create, read, update', () => {
    it('create: 201 with the account and its secret, shown this once', async () => {
      const res = await admin(t.http.post(ADMIN)).send({
        name: 'Acme Bank',
        webhook_url: 'https://acme.example/webhooks/kyc',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(LOWER_UUID),
        object: 'account',
        name: 'Acme Bank',
        webhook_url: 'https://acme.example/webhooks/kyc',
        created_at: expect.stringMatching(ISO_MS),
        webhook_secret: expect.stringMatching(SECRET),
      });
      expect(Buffer.from(res.body.webhook_secret.slice(6), 'base64')).toHaveLength(32);

      const read = await admin(t.http.get(`${ADMIN}/${res.body.id}`));
      expect(read.status).toBe(200);
      const { webhook_secret: secret, ...account } = res.body;
      const { webhook_endpoint: endpoint, ...readAccount } = read.body;
      expect(readAccount).toEqual(account);
      expect(endpoint).toMatchObject({ object: 'webhook_endpoint', url: account.webhook_url, status: 'enabled' });
      expect(read.text).not.toContain('whsec_');
      expect(read.text).not.toContain(secret.slice(6, 30));
    });

    it('stores the secret encrypted and hashed, never in the clear', async () => {
      const account = await createAccount(t);
      const { rows } = await t.db.query(
        `SELECT secret_ciphertext, encode(secret_hash, 'hex') AS hash FROM account_secrets WHERE account_id = $1`,
        [account.id],
      );
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(account.secret.slice(6, 30));
      expect(rows[0].hash).toHaveLength(64);
    });

    it('webhook_url is optional and null when not given; an upper-case id reads the same account', async () => {
      const account = await createAccount(t);
      expect(account.webhook_url).toBeNull();
      const read = await admin(t.http.get(`${ADMIN}/${account.id.toUpperCase()}`));
      expect(read.status).toBe(200);
      expect(read.body.id).toBe(account.id);
    });

    it('accepts a 2048-char https URL', async () => {
      const base = 'https://example.com/';
      const res = await admin(t.http.post(ADMIN)).send({
        name: 'long',
        webhook_url: base + 'a'.repeat(2048 - base.length),
      });
      expect(res.status).toBe(201);
    });

    it('patch updates the name and the URL, null clears the URL, and no secret is shown', async () => {
      const account = await createAccount(t, { webhook_url: 'https://a.example/hook' });
      const renamed = await admin(t.http.patch(`${ADMIN}/${account.id}`)).send({ name: 'Renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ id: account.id, name: 'Renamed', webhook_url: 'https://a.example/hook' });
      expect(Object.keys(renamed.body).sort()).toEqual(['created_at', 'id', 'name', 'object', 'webhook_url']);

      const moved = await admin(t.http.patch(`${ADMIN}/${account.id}`)).send({ webhook_url: 'https://b.example/hook' });
      expect(moved.body).toMatchObject({ name: 'Renamed', webhook_url: 'https://b.example/hook' });

      const cleared = await admin(t.http.patch(`${ADMIN}/${account.id}`)).send({ webhook_url: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.webhook_url).toBeNull();
      const { webhook_endpoint: _endpoint, ...readBack } = (await admin(t.http.get(`${ADMIN}/${account.id}`))).body;
      expect(readBack).toEqual(cleared.body);

      const untouched = await admin(t.http.patch(`${ADMIN}/${account.id}`)).send({});
      expect(untouched.status).toBe(200);
      expect(untouched.body).toEqual(cleared.body);
      await expect(authenticates(account.secret)).resolves.toBe(200);
    });

    it('null name on patch is 400 and changes nothing', async () => {
      const account = await createAccount(t, { name: 'Keep' });
      expectError(
        await admin(t.http.patch(`${ADMIN}/${account.id}`)).send({ name: null }),
        400,
        'validation_failed',
        'name',
      );
      expect((await admin(t.http.get(`${ADMIN}/${account.id}`))).body.name).toBe('Keep');
    });
  });

  describe('secret rotation', () => {
    let account: CreatedAccount;
    beforeEach(async () => {
      account = await createAccount(t);
    });

    it('default grace: 86400 s, both secrets authenticate', async () => {
      const before = Date.now();
      const res = await rotate(account.id);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['previous_secret_expires_at', 'webhook_secret']);
      expect(res.body.webhook_secret).toMatch(SECRET);
      expect(res.body.webhook_secret).not.toBe(account.secret);
      expect(res.body.previous_secret_expires_at).toMatch(ISO_MS);
      const expires = Date.parse(res.body.previous_secret_expires_at);
      expect(expires).toBeGreaterThanOrEqual(before + 86_400_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000);
      await expect(authenticates(account.secret)).resolves.toBe(200);
      await expect(authenticates(res.body.webhook_secret)).resolves.toBe(200);
    });

    it('a bodiless rotate uses the default grace', async () => {
      const res = await admin(t.http.post(`${ADMIN}/${account.id}/secret/rotate`));
      expect(res.status).toBe(200);
      await expect(authenticates(account.secret)).resolves.toBe(200);
    });

    it('explicit grace within 0..604800', async () => {
      const before = Date.now();
      const res = await rotate(account.id, { grace_period_seconds: 604800 });
      expect(res.status).toBe(200);
      expect(Date.parse(res.body.previous_secret_expires_at)).toBeGreaterThanOrEqual(before + 604_800_000);
    });

    it('grace 0: the old secret is 401 at once', async () => {
      const res = await rotate(account.id, { grace_period_seconds: 0 });
      expect(res.status).toBe(200);
      expect(Date.parse(res.body.previous_secret_expires_at)).toBeLessThanOrEqual(Date.now());
      await expect(authenticates(account.secret)).resolves.toBe(401);
      await expect(authenticates(res.body.webhook_secret)).resolves.toBe(200);
    });

    it('a second rotation ends the grace of the one before at once', async () => {
      const first = await rotate(account.id, { grace_period_seconds: 3600 });
      const second = await rotate(account.id, { grace_period_seconds: 3600 });
      expect(second.status).toBe(200);
      await expect(authenticates(account.secret)).resolves.toBe(401);
      await expect(authenticates(first.body.webhook_secret)).resolves.toBe(200);
      await expect(authenticates(second.body.webhook_secret)).resolves.toBe(200);
      const read = await admin(t.http.get(`${ADMIN}/${account.id}`));
      expect(read.text).not.toContain('whsec_');
    });
  });
});
