import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ChangeAcknowledgements } from 'src/accounts/credential-acks';
import { CREDENTIAL_LEASE_MS, CredentialCache } from 'src/accounts/credential-cache';
import { CREDENTIAL_CHANNEL, LISTENER_APPLICATION_NAME } from 'src/accounts/credential-changes';
import { CommitSettler } from 'src/database/commit-settler';
import type { CommitProbe } from 'src/database/in-doubt';

/**
 * A process that has not acknowledged a change by its commit + the lease (and this margin for timers)
 * cannot answer from its cache any more: its lease came from a round trip sent before the commit.
 */
const LEASE_MARGIN_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export interface ChangeOptions<T> {
  /** Wait until every API process dropped the account's cached credentials. */
  confirm?: boolean;
  /** What shows the change committed, if its commit's answer is lost (commit-settler.ts). */
  committed?: (result: T) => CommitProbe | null;
}

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
    private readonly settler: CommitSettler,
  ) {}

  /**
   * Runs `work` in a transaction that announces the change. With `confirm` (a secret stops
   * working), it returns only once every listening API process acknowledged it, or else once the
   * lease of any process that did not has run out (commit + CREDENTIAL_LEASE_MS): so no cache
   * accepts the old secret after the caller answers, even one whose listener went silent. A process
   * whose listening connection PostgreSQL already dropped, unnoticed, is not counted: its lease
   * bounds it to 1 s after the answer.
   */
  async change<T>(
    accountId: string,
    work: (manager: EntityManager) => Promise<T>,
    { confirm = false, committed = () => null }: ChangeOptions<T> = {},
  ): Promise<T> {
    const change = `${accountId} ${randomUUID()}`;
    if (confirm) this.acks.expect(change);
    try {
      const result = await this.settler.transaction(async (manager) => {
        const value = await work(manager);
        await manager.query('SELECT pg_notify($1, $2)', [CREDENTIAL_CHANNEL, change]);
        return value;
      }, committed);
      this.cache.invalidateAccount(accountId);
      const leasesEnd = Date.now() + CREDENTIAL_LEASE_MS + LEASE_MARGIN_MS;
      // Committed: the caller must get its result (a new secret) even if the wait cannot be done.
      if (confirm) {
        await this.confirmed(change, leasesEnd).catch(async (error: unknown) => {
          this.unconfirmed((error as Error).message);
          await sleep(leasesEnd - Date.now());
        });
      }
      return result;
    } finally {
      this.acks.forget(change);
    }
  }

  private async confirmed(change: string, leasesEnd: number): Promise<void> {
    // Acknowledgements come through this process's own listener (none in the CLI, or while it is
    // down): without it, wait the leases out.
    if (!this.cache.isTrusted) return sleep(leasesEnd - Date.now());
    const [{ listeners }]: { listeners: number }[] = await this.dataSource.query(
      `SELECT count(*)::int AS listeners FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1`,
      [LISTENER_APPLICATION_NAME],
    );
    // The wait ends with the leases: a process that has not acknowledged by then no longer answers from its cache.
    if (!(await this.acks.wait(change, listeners, Math.max(0, leasesEnd - Date.now()))))
      this.unconfirmed(`not all ${listeners} API processes acknowledged before their leases ran out`);
  }

  private unconfirmed(reason: string): void {
    this.logger.warn(`a credential change was committed but not confirmed everywhere: ${reason}`);
  }
}
