import type { DataSource, EntityManager } from 'typeorm';
import { Account } from 'src/accounts/account.entity';

/**
 * The account's webhook URL (null when it has none) as a scalar subquery, over `accountId`: the SQL
 * expression of an account id in the caller's statement (a column or a parameter placeholder).
 */
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

  async update(manager: EntityManager, id: string, changes: Pick<Account, 'name' | 'webhookUrl' | 'updatedAt'>) {
    await manager.update(Account, { id }, changes);
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
