import type { CommitProbe } from 'src/database/in-doubt';
import type { DataSource, EntityManager } from 'typeorm';
import { Account } from 'src/accounts/account.entity';

/**
 * The account's webhook URL (null when it has none) as a scalar subquery, over `accountId`: the SQL
 * expression of an account id in the caller's statement (a column or a parameter placeholder).
 */
/** Whether the account `id` is committed (its create's answer was lost). */
export function accountCommitted(id: string): CommitProbe {
  return async (query) => (await query('SELECT 1 FROM accounts WHERE id = $1', [id])).length > 0;
}

export function webhookUrlOf(accountId: string): string {
  return `(SELECT a.webhook_url FROM accounts a WHERE a.id = ${accountId})`;
}

/**
 * Every statement on `accounts`. Methods that write take the caller's transaction; `webhookUrlOf`
 * is the fragment other features compose into their own statements, so where an account's webhook
 * URL lives is written once.
 */
export class AccountRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, account: Account): Promise<void> {
    await manager.insert(Account, account);
  }

  findById(id: string): Promise<Account | null> {
    return this.dataSource.getRepository(Account).findOneBy({ id });
  }

  /** The account, locked until the caller's transaction ends. */
  lockById(manager: EntityManager, id: string): Promise<Account | null> {
    return manager.getRepository(Account).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  exists(id: string, manager: EntityManager = this.dataSource.manager): Promise<boolean> {
    return manager.getRepository(Account).existsBy({ id });
  }

  /**
   * Writes only the fields named in `changes` (and updated_at), in one statement that also returns
   * the url the account had (read under the row's lock): concurrent changes of other fields are
   * never written back. The lock is FOR NO KEY UPDATE (the key does not change), so the account's
   * new events (their foreign key takes FOR KEY SHARE) are not held up meanwhile. Null when there
   * is no such account.
   */
  async updateNamed(
    manager: EntityManager,
    id: string,
    changes: Partial<Pick<Account, 'name' | 'webhookUrl'>>,
    updatedAt: Date,
  ): Promise<{ account: Account; previousUrl: string | null } | null> {
    const values: unknown[] = [id, updatedAt];
    const sets = ['updated_at = $2'];
    if (changes.name !== undefined) sets.push(`name = $${values.push(changes.name)}`);
    if (changes.webhookUrl !== undefined) sets.push(`webhook_url = $${values.push(changes.webhookUrl)}`);
    const [rows] = (await manager.query(
      `UPDATE accounts a SET ${sets.join(', ')}
         FROM (SELECT id, webhook_url FROM accounts WHERE id = $1 FOR NO KEY UPDATE) before
        WHERE a.id = before.id
      RETURNING a.id, a.name, a.webhook_url AS "webhookUrl", a.created_at AS "createdAt", a.updated_at AS "updatedAt",
                before.webhook_url AS "previousUrl"`,
      values,
    )) as [(Account & { previousUrl: string | null })[], number];
    const row = rows[0];
    if (!row) return null;
    const { previousUrl, ...account } = row;
    return { account: Object.assign(new Account(), account), previousUrl };
  }

  /** The account's webhook URL; null when it has none or does not exist. */
  async webhookUrl(accountId: string): Promise<string | null> {
    const rows: { webhook_url: string | null }[] = await this.dataSource.query(
      `SELECT ${webhookUrlOf('$1')} AS webhook_url`,
      [accountId],
    );
    return rows[0]?.webhook_url ?? null;
  }
}
