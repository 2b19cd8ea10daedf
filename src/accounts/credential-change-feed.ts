import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ChangeAcknowledgements } from 'src/accounts/credential-acks';
import { CredentialCache } from 'src/accounts/credential-cache';
import { CREDENTIAL_CHANNEL, LISTENER_APPLICATION_NAME } from 'src/accounts/credential-changes';

/** How long a rotation waits for every API process to confirm before answering anyway. */
const CONFIRM_WAIT_MS = 1_000;

/**
 * Changes to an account's credentials, announced to every API process's credential cache: the
 * transaction sends `NOTIFY` (delivered exactly at the commit) with `<account id> <change id>`.
 */
@Injectable()
export class CredentialChangeFeed {
  private readonly logger = new Logger(CredentialChangeFeed.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cache: CredentialCache,
    private readonly acks: ChangeAcknowledgements,
  ) {}

  /**
   * Runs `work` in a transaction that announces the change. With `confirm` (a secret stops
   * working), it returns only once every listening API process acknowledged it, or after
   * CONFIRM_WAIT_MS, so no cache accepts the old secret after the caller answers.
   */
  async change<T>(
    accountId: string,
    work: (manager: EntityManager) => Promise<T>,
    { confirm = false } = {},
  ): Promise<T> {
    const change = `${accountId} ${randomUUID()}`;
    if (confirm) this.acks.expect(change);
    try {
      const result = await this.dataSource.transaction(async (manager) => {
        const value = await work(manager);
        await manager.query('SELECT pg_notify($1, $2)', [CREDENTIAL_CHANNEL, change]);
        return value;
      });
      this.cache.invalidateAccount(accountId);
      // Committed: the caller must get its result (a new secret) even if the wait cannot be done.
      if (confirm) await this.confirmed(change).catch((error: unknown) => this.unconfirmed((error as Error).message));
      return result;
    } finally {
      this.acks.forget(change);
    }
  }

  private async confirmed(change: string): Promise<void> {
    // Acknowledgements come through this process's own listener (none in the CLI, or while it is down).
    if (!this.cache.isTrusted) return;
    const [{ listeners }]: { listeners: number }[] = await this.dataSource.query(
      `SELECT count(*)::int AS listeners FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1`,
      [LISTENER_APPLICATION_NAME],
    );
    if (!(await this.acks.wait(change, listeners, CONFIRM_WAIT_MS)))
      this.unconfirmed(`not all ${listeners} API processes acknowledged within ${CONFIRM_WAIT_MS} ms`);
  }

  private unconfirmed(reason: string): void {
    this.logger.warn(`a credential change was committed but not confirmed everywhere: ${reason}`);
  }
}
