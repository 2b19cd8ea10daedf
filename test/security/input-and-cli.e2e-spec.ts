import { cli, cliWith } from '../helpers/cli';
import { createAccount, createVerification, transition } from '../helpers/factories';
import { dbSnapshot, expectError } from '../helpers/expect-error';
import { startApp, TestApp } from '../helpers/test-app';

const INTERNAL = '/api/v1/internal/kyc/verifications';
const ADMIN = '/api/v1/admin/accounts';
const LIST = '/api/v1/public/kyc/verifications';
const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';
const C0_C1 = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/; // eslint-disable-line no-control-regex

/** A body whose one string is `text` inserted verbatim (JSON escapes or raw bytes) where `@` stands. */
interface Target {
  name: string;
  path: () => string;
  auth: () => string;
  /** JSON text with one `@` inside a string literal (value or key). */
  template: () => string;
  field: string;
}

describe('security: text stored exactly as accepted, and the ops CLI', () => {
  let t: TestApp;
  let accountId: string;
  let clientSecret: string;

  beforeAll(async () => {
    t = await startApp({ APP_ROLE: 'api' });
    const account = await createAccount(t, { webhook_url: null });
    accountId = account.id;
    clientSecret = account.secret;
  });

  afterAll(async () => {
    await t.close();
  });

  const create = (rest: string) => () => `{"account_id":"${accountId}","external_user_id":"u-1"${rest}}`;
  const targets: Target[] = [
    {
      name: 'an account name',
      path: () => ADMIN,
      auth: () => t.adminToken,
      template: () => '{"name":"a@b"}',
      field: 'name',
    },
    {
      name: 'an external_user_id',
      path: () => INTERNAL,
      auth: () => t.internalToken,
      template: () => `{"account_id":"${accountId}","external_user_id":"u@"}`,
      field: 'external_user_id',
    },
    {
      name: 'a metadata value',
      path: () => INTERNAL,
      auth: () => t.internalToken,
      template: create(',"metadata":{"plan":"g@"}'),
      field: 'metadata.plan',
    },
    {
      name: 'a metadata key',
      path: () => INTERNAL,
      auth: () => t.internalToken,
      template: create(',"metadata":{"p@":"gold"}'),
      field: 'metadata',
    },
    {
      name: 'an applicant field',
      path: () => INTERNAL,
      auth: () => t.internalToken,
      template: create(',"applicant":{"first_name":"A@a"}'),
      field: 'applicant.first_name',
    },
  ];

  async function post(target: Target, body: string | Buffer) {
    return (
      t.http
        .post(target.path())
        .set('authorization', `Bearer ${target.auth()}`)
        .set('content-type', 'application/json')
        // The bytes as given: superagent would JSON-encode a Buffer (its typing says string, it writes either).
        .serialize(((raw: string | Buffer) => raw) as unknown as (raw: unknown) => string)
        .send(body)
    );
  }

  async function expectRefused(target: Target, body: string | Buffer, field: string): Promise<void> {
    const before = await dbSnapshot(t.db);
    const res = await post(target, body);
    expectError(res, 400, 'validation_failed', field);
    expect(await dbSnapshot(t.db)).toEqual(before);
  }

  describe.each(targets)('$name', (target) => {
    it('is accepted when well-formed (the template itself is valid)', async () => {
      const res = await post(target, target.template().replace('@', 'é'));
      expect(res.status).toBe(201);
    });

    it.each(['\\ud800', '\\udfff', '\\ud83d', 'x\\ude00'])(
      'refuses a lone surrogate as the JSON escape %s',
      async (escape) => {
        await expectRefused(target, target.template().replace('@', escape), target.field);
      },
    );

    it.each([
      ['a bad continuation byte', 'c328'],
      ['0xFF', 'ff'],
      ['an overlong "/"', 'c0af'],
      ['a UTF-8-encoded surrogate', 'eda080'],
    ])('refuses invalid UTF-8 in the raw body: %s', async (_name, hex) => {
      const [head, tail] = target.template().split('@');
      const body = Buffer.concat([Buffer.from(head), Buffer.from(hex, 'hex'), Buffer.from(tail)]);
      await expectRefused(target, body, 'body');
    });

    it.each([
      ['ESC as a JSON escape', '\\u001b[31m'],
      ['BEL', '\\u0007'],
      ['NUL', '\\u0000'],
      ['a newline', '\\n'],
      ['a tab', '\\t'],
      ['DEL, raw', '\u007f'],
      ['NEL (U+0085), raw', '\u0085'],
      ['CSI (U+009B) as a JSON escape', '\\u009b'],
    ])('refuses a control character: %s', async (_name, text) => {
      await expectRefused(target, target.template().replace('@', text), target.field);
    });
  });

  it('refuses a control character in a webhook_url and in a transition applicant', async () => {
    const v = await createVerification(t, accountId);
    const before = await dbSnapshot(t.db);
    const url = await t.http
      .patch(`${ADMIN}/${accountId}`)
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ webhook_url: 'https://a.example/\u001b[2J' });
    expectError(url, 400, 'validation_failed', 'webhook_url');
    const moved = await t.http
      .post(`${INTERNAL}/${v.id}/transitions`)
      .set('authorization', `Bearer ${t.internalToken}`)
      .send({ status: 'processing', applicant: { last_name: 'L\u0085' } });
    expectError(moved, 400, 'validation_failed', 'applicant.last_name');
    expect(await dbSnapshot(t.db)).toEqual(before);
  });

  it.each([
    ['q=%ED%A0%80', 'q'],
    ['q=%FF', 'q'],
    ['q=%C0%AF', 'q'],
    ['external_user_id=%ED%A0%80', 'external_user_id'],
    ['external_user_id=%1B[31m', 'external_user_id'],
    ['q=a%0Ab', 'q'],
    ['q=%07', 'q'],
    ['q=%7F', 'q'],
    ['q=%C2%85', 'q'],
    ['external_user_id=a%0Ab', 'external_user_id'],
    ['external_user_id=%7F', 'external_user_id'],
    ['external_user_id=%C2%85', 'external_user_id'],
    ['cursor=%1B', 'cursor'],
    ['limit=5&q=%C2%9B', 'q'],
  ])('refuses the list query ?%s', async (query, field) => {
    const res = await t.http.get(`${LIST}?${query}`).set('authorization', `Bearer ${clientSecret}`);
    expectError(res, 400, 'validation_failed', field);
  });

  it('keeps emoji, right-to-left, combining and accented text byte-identical', async () => {
    const name = 'Zoë Ångström 😀 👨‍👩‍👧 שלום مرحبا e\u0301';
    const account = await createAccount(t, { name, webhook_url: null });
    expect(account.name).toBe(name);
    const read = await t.http.get(`${ADMIN}/${account.id}`).set('authorization', `Bearer ${t.adminToken}`);
    expect(read.body.name).toBe(name);
    const stored = await t.db.query<{ bytes: Buffer }>(
      `SELECT convert_to(name, 'UTF8') AS bytes FROM accounts WHERE id = $1`,
      [account.id],
    );
    expect(Buffer.compare(stored.rows[0].bytes, Buffer.from(name, 'utf8'))).toBe(0);

    const v = await createVerification(t, account.id, {
      external_user_id: 'user-😀',
      applicant: { first_name: 'Zoë', last_name: 'כהן' },
      metadata: { 'שלום 😀': 'e\u0301 مرحبا' },
    });
    const detail = await t.http.get(`${LIST}/${v.id}`).set('authorization', `Bearer ${account.secret}`);
    expect(detail.body).toMatchObject({
      external_user_id: 'user-😀',
      applicant: { first_name: 'Zoë', last_name: 'כהן' },
      metadata: { 'שלום 😀': 'e\u0301 مرحبا' },
    });
    const found = await t.http
      .get(`${LIST}?q=${encodeURIComponent('כהן')}`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(found.status).toBe(200);
    expect(found.body.data.map((item: { id: string }) => item.id)).toEqual([v.id]);
  });

  describe('ops CLI', () => {
    const badArguments: string[][] = [
      ['deliveries:failed', 'not-a-uuid'],
      ['accounts:rotate-secret', 'not-a-uuid'],
      ['redact', 'not-a-uuid'],
      ['deliveries:replay', 'not-a-uuid'],
      ['deliveries:replay', UNKNOWN_ID, '--event', 'not-a-uuid'],
      ['deliveries:replay', UNKNOWN_ID, '--created-from', 'yesterday'],
      ['deliveries:replay', UNKNOWN_ID, '--created-to', '2026-02-30'],
      ['deliveries:replay', UNKNOWN_ID, '--created-from', '2026-02-01', '--created-to', '2026-01-01'],
      ['deliveries:replay', UNKNOWN_ID, '--bogus', 'x'],
      ['deliveries:failed', UNKNOWN_ID, '--limit', 'ten'],
      ['accounts:rotate-secret'],
      ['accounts:frobnicate'],
      ['accounts:create', '--name', 'Evil\u001b[31mRed'],
    ];

    it('exits 2 with one line on stderr for every malformed argument, changing nothing', async () => {
      const before = await dbSnapshot(t.db);
      const results = await Promise.all(badArguments.map((args) => cli(...args)));
      results.forEach((result, i) => {
        expect({ args: badArguments[i], code: result.code, stdout: result.stdout }).toEqual({
          args: badArguments[i],
          code: 2,
          stdout: '',
        });
        expect(result.stderr).toMatch(/^error: .*\(npm run cli -- --help\)\n$/);
        expect(result.stderr).not.toMatch(C0_C1);
      });
      expect(await dbSnapshot(t.db)).toEqual(before);
    });

    it('finds malformed arguments before any database work (exit 2 even with PostgreSQL unreachable)', async () => {
      const unreachable = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/kyc_test_unreachable' };
      const results = await Promise.all(badArguments.slice(0, 8).map((args) => cliWith(unreachable, ...args)));
      results.forEach((result, i) => {
        expect({ args: badArguments[i], code: result.code }).toEqual({ args: badArguments[i], code: 2 });
        expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      });
    });

    it('still exits 1 for a well-formed command that fails', async () => {
      const result = await cli('deliveries:failed', UNKNOWN_ID);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^error: No such account/);
    });

    it('escapes control characters a row stored before they were refused would send to the terminal', async () => {
      const account = await createAccount(t, { webhook_url: null });
      const v = await createVerification(t, account.id);
      await transition(t, v.id, { status: 'processing' });
      const evil = 'Evil\u001b]0;pwned\u0007\u001b[2J\u009b31m\u007f';
      await t.db.query('UPDATE accounts SET name = $1 WHERE id = $2', [evil, account.id]);
      await t.db.query(`UPDATE webhook_events SET last_error = $1 WHERE verification_id = $2`, [evil, v.id]);

      const result = await cli('deliveries:failed', account.id);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Evil\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u007f');
      expect(result.stdout).not.toMatch(C0_C1);
    });
  });
});
