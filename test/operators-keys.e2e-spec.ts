import { cli } from './helpers/cli';
import { createAccount } from './helpers/factories';
import { ISO_MS, LOWER_UUID, dbSnapshot, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

const KEYS = '/api/v1/admin/operator-keys';
const ACCOUNTS = '/api/v1/admin/accounts';
const KEY = /^kyc_op_[A-Za-z0-9_-]{43}$/;
const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';

type Role = 'viewer' | 'operator' | 'compliance' | 'auditor' | 'admin';

describe('operator keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const as = <T extends { set(name: string, value: string): T }>(token: string, req: T): T =>
    req.set('authorization', `Bearer ${token}`);
  const issue = async (role: Role, extra: object = {}): Promise<{ id: string; key: string }> => {
    const res = await as(t.adminToken, t.http.post(KEYS)).send({ name: `${role} script`, role, ...extra });
    expect(res.status).toBe(201);
    return res.body;
  };

  it('create: 201 with the key, shown this once; stored hashed; list newest first without it', async () => {
    const res = await as(t.adminToken, t.http.post(KEYS)).send({ name: 'reconciliation', role: 'viewer' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(LOWER_UUID),
      object: 'operator_key',
      name: 'reconciliation',
      role: 'viewer',
      created_at: expect.stringMatching(ISO_MS),
      expires_at: expect.stringMatching(ISO_MS),
      last_used_at: null,
      revoked_at: null,
      key: expect.stringMatching(KEY),
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(90 * 86_400_000);
    const { rows } = await t.db.query(`SELECT * FROM operator_keys WHERE id = $1`, [res.body.id]);
    expect(JSON.stringify(rows)).not.toContain(res.body.key.slice(7));

    const later = await issue('operator', { expires_in_days: 1 });
    const list = await as(t.adminToken, t.http.get(KEYS));
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const ids = list.body.data.map((key: { id: string }) => key.id);
    expect(ids.indexOf(later.id)).toBeLessThan(ids.indexOf(res.body.id));
    const { key, ...shown } = res.body;
    expect(list.body.data.find((item: { id: string }) => item.id === shown.id)).toEqual(shown);
    expect(list.text).not.toContain(key);
    expect(list.text).not.toContain('"key"');
  });

  it.each([
    [{ role: 'viewer' }, 'name'],
    [{ name: ' ', role: 'viewer' }, 'name'],
    [{ name: 'x', role: 'root' }, 'role'],
    [{ name: 'x' }, 'role'],
    [{ name: 'x', role: 'viewer', expires_in_days: 0 }, 'expires_in_days'],
    [{ name: 'x', role: 'viewer', expires_in_days: 366 }, 'expires_in_days'],
    [{ name: 'x', role: 'viewer', expires_in_days: 1.5 }, 'expires_in_days'],
    [{ name: 'x', role: 'viewer', key: 'kyc_op_mine' }, 'key'],
  ])('create %j: 400 on %s, nothing written', async (body, field) => {
    const before = await t.db.query(`SELECT count(*) FROM operator_keys`);
    const res = await as(t.adminToken, t.http.post(KEYS)).send(body);
    expectError(res, 400, 'validation_failed', field);
    expect((await t.db.query(`SELECT count(*) FROM operator_keys`)).rows).toEqual(before.rows);
  });

  it('a key authenticates with its role and records its use; revoked (204) it is 401 at once', async () => {
    const { id, key } = await issue('viewer');
    const account = await createAccount(t);
    expect((await as(key, t.http.get(`${ACCOUNTS}/${account.id}`))).status).toBe(200);
    const { rows } = await t.db.query(`SELECT last_used_at FROM operator_keys WHERE id = $1`, [id]);
    expect(rows[0].last_used_at).not.toBeNull();

    const revoked = await as(t.adminToken, t.http.delete(`${KEYS}/${id}`));
    expect(revoked.status).toBe(204);
    expectError(await as(key, t.http.get(`${ACCOUNTS}/${account.id}`)), 401, 'unauthorized');
    expect((await as(t.adminToken, t.http.delete(`${KEYS}/${id}`))).status).toBe(204);
    const list = await as(t.adminToken, t.http.get(KEYS));
    expect(list.body.data.find((item: { id: string }) => item.id === id).revoked_at).toMatch(ISO_MS);
  });

  it('issuing and revoking are in the audit trail with the key as target; a second revoke records nothing', async () => {
    const { id } = await issue('operator');
    expect((await as(t.adminToken, t.http.delete(`${KEYS}/${id}`))).status).toBe(204);
    expect((await as(t.adminToken, t.http.delete(`${KEYS}/${id}`))).status).toBe(204);
    const { rows } = await t.db.query(
      `SELECT action, target_type, changes, actor_via FROM audit_events WHERE target_id = $1
       UNION ALL SELECT action, target_type, changes, actor_via FROM audit_pending WHERE target_id = $1`,
      [id],
    );
    expect(rows.sort((a, b) => a.action.localeCompare(b.action))).toEqual([
      {
        action: 'operator_key.created',
        target_type: 'operator_key',
        changes: ['name', 'role', 'expires_at'],
        actor_via: 'admin_token',
      },
      {
        action: 'operator_key.revoked',
        target_type: 'operator_key',
        changes: ['revoked_at'],
        actor_via: 'admin_token',
      },
    ]);
  });

  it('an expired key is 401; so is an unknown one of the right shape', async () => {
    const { id, key } = await issue('admin');
    await t.db.query(`UPDATE operator_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    expectError(await as(key, t.http.get(KEYS)), 401, 'unauthorized');
    expectError(await as(`kyc_op_${'A'.repeat(43)}`, t.http.get(KEYS)), 401, 'unauthorized');
  });

  it('DELETE: unknown id 404, malformed id 400', async () => {
    expectError(await as(t.adminToken, t.http.delete(`${KEYS}/${UNKNOWN_ID}`)), 404, 'not_found');
    expectError(await as(t.adminToken, t.http.delete(`${KEYS}/nope`)), 400, 'validation_failed', 'id');
  });

  describe('roles', () => {
    const keys = {} as Record<Role, string>;
    let accountId: string;
    beforeAll(async () => {
      for (const role of ['viewer', 'operator', 'compliance', 'auditor', 'admin'] as const) {
        keys[role] = (await issue(role)).key;
      }
      accountId = (await createAccount(t)).id;
    });

    it.each([
      ['viewer', 'GET', 200],
      ['compliance', 'GET', 200],
      ['auditor', 'GET', 403],
      ['operator', 'PATCH', 200],
      ['viewer', 'PATCH', 403],
      ['compliance', 'PATCH', 403],
      ['operator', 'ROTATE', 403],
      ['admin', 'ROTATE', 200],
      ['operator', 'KEYS', 403],
      ['admin', 'KEYS', 200],
    ] as const)('%s %s: %i', async (role, action, status) => {
      const before = await dbSnapshot(t.db);
      const token = keys[role];
      const res =
        action === 'GET'
          ? await as(token, t.http.get(`${ACCOUNTS}/${accountId}`))
          : action === 'PATCH'
            ? await as(token, t.http.patch(`${ACCOUNTS}/${accountId}`)).send({ name: `renamed by ${role}` })
            : action === 'ROTATE'
              ? await as(token, t.http.post(`${ACCOUNTS}/${accountId}/secret/rotate`)).send({})
              : await as(token, t.http.get(KEYS));
      expect(res.status).toBe(status);
      if (status === 403) {
        expectError(res, 403, 'forbidden');
        expect(await dbSnapshot(t.db)).toEqual(before);
      }
    });

    it('a forbidden request is 403 before its body is even read (invalid body included)', async () => {
      const before = await dbSnapshot(t.db);
      expectError(await as(keys.viewer, t.http.post(ACCOUNTS)).send({ bogus: true }), 403, 'forbidden');
      expect(await dbSnapshot(t.db)).toEqual(before);
    });
  });

  it('CLI: create prints the key, list shows it without, revoke refuses it; bad arguments exit 2', async () => {
    const created = await cli(
      'operator-keys',
      'create',
      '--name',
      'first admin',
      '--role',
      'admin',
      '--expires-in-days',
      '7',
    );
    expect(created).toMatchObject({ code: 0 });
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({
      object: 'operator_key',
      name: 'first admin',
      role: 'admin',
      key: expect.stringMatching(KEY),
    });
    expect(Date.parse(key.expires_at) - Date.parse(key.created_at)).toBe(7 * 86_400_000);
    expect((await as(key.key, t.http.get(KEYS))).status).toBe(200);

    const list = await cli('operator-keys', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(key.id);
    expect(list.stdout).not.toContain(key.key);

    expect((await cli('operator-keys', 'revoke', key.id)).code).toBe(0);
    expectError(await as(key.key, t.http.get(KEYS)), 401, 'unauthorized');
    expect(await cli('operator-keys', 'revoke', UNKNOWN_ID)).toMatchObject({ code: 1 });

    for (const argv of [
      ['operator-keys', 'create', '--name', 'x', '--role', 'root'],
      ['operator-keys', 'create', '--role', 'admin'],
      ['operator-keys', 'create', '--name', 'x', '--role', 'admin', '--expires-in-days', '400'],
      ['operator-keys', 'revoke', 'nope'],
    ]) {
      const res = await cli(...argv);
      expect(res).toMatchObject({ code: 2, stdout: '' });
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
