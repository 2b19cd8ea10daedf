import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { SecretKeyring, keyIdOf } from 'src/accounts/secret-crypto';
import { type CliResult, cliWith } from './helpers/cli';
import { ownDatabase } from './helpers/own-database';

/**
 * The CLI commands that seal or read a webhook secret check SECRET_ENCRYPTION_KEY against what is
 * stored first, as every service role does at start: a shell still holding a retired key stops with
 * one line naming the variable and changes nothing. A non-canonical base64 spelling of the right key
 * is that key. On a database of its own: the run's database holds secrets sealed under the run's key.
 */

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const base64 = (key: Buffer): string => key.toString('base64');
/** The same 32 bytes with the last character's two unused bits set: another spelling of the key. */
const twin = (key: Buffer): string => {
  const canonical = base64(key);
  return canonical.slice(0, 42) + BASE64[BASE64.indexOf(canonical[42]) ^ 1] + '=';
};
const [KEY_A, KEY_B] = [randomBytes(32), randomBytes(32)];

describe('SECRET_ENCRYPTION_KEY: checked by the CLI commands that seal or read secrets', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let db: Pool;

  const run = (keys: string, ...args: string[]): Promise<CliResult> =>
    cliWith({ DATABASE_URL: database.url, SECRET_ENCRYPTION_KEY: keys, LOG_LEVEL: 'warn' }, ...args);
  const stored = async (): Promise<string[]> =>
    (
      await db.query<{ row: string }>(
        `SELECT account_id || ' ' || secret_ciphertext AS row FROM account_secrets ORDER BY id`,
      )
    ).rows.map((r) => r.row);
  const accounts = async (): Promise<number> =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM accounts')).rows[0].n);

  beforeAll(async () => {
    database = await ownDatabase('keys_cli');
    db = new Pool({ connectionString: database.url, max: 2 });
  });

  afterAll(async () => {
    await db.end();
    await database.drop();
  });

  it('stops accounts:create, accounts:rotate-secret and reencrypt under a retired key, in one line, changing nothing', async () => {
    const created = await run(base64(KEY_A), 'accounts:create', '--name', 'Keys');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const accountId = (JSON.parse(created.stdout) as { id: string }).id;
    const before = { secrets: await stored(), accounts: await accounts() };

    for (const args of [['accounts:create', '--name', 'Other'], ['accounts:rotate-secret', accountId], ['reencrypt']]) {
      const result = await run(base64(KEY_B), ...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: '' });
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toEqual([
        expect.stringContaining(
          `SECRET_ENCRYPTION_KEY cannot decrypt the stored webhook secrets (1 sealed by key ${keyIdOf(KEY_A)})`,
        ),
      ]);
      expect(result.stderr).not.toContain(base64(KEY_B));
      expect({ secrets: await stored(), accounts: await accounts() }).toEqual(before);
    }
  });

  it('takes a non-canonical spelling of the key as the key', async () => {
    expect(twin(KEY_A)).not.toBe(base64(KEY_A));
    const created = await run(twin(KEY_A), 'accounts:create', '--name', 'Twin');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const rotated = await run(`${base64(KEY_B)},${twin(KEY_A)}`, 'reencrypt');
    expect(rotated).toMatchObject({ code: 0, stderr: '' });
    const sealers = (await stored()).map((row) => SecretKeyring.sealerOf(row.split(' ')[1]));
    expect(new Set(sealers)).toEqual(new Set([keyIdOf(KEY_B)]));
    const twice = await run(`${base64(KEY_B)},${twin(KEY_B)}`, 'reencrypt');
    expect(twice.code).toBe(1);
    expect(twice.stderr.trim()).toBe('Invalid configuration: SECRET_ENCRYPTION_KEY names a key twice');
  });
});
