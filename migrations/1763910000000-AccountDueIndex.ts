import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's window of deliveries counts every event of it that is due (queued or in flight), not
 * only the first attempts of later cycles: the worker now parks an event whose account has the most
 * deliveries in flight, and a parked event of any cycle waits its turn like a released one. The
 * count walks this index; the narrower one it replaces goes.
 *
 * Built CONCURRENTLY (outside a transaction): at a year of data it reads the whole table, and a
 * plain CREATE INDEX would stop status changes while it does. An index left invalid by a failed
 * build is dropped and built again on the next run.
 */
export class AccountDueIndex1763910000000 implements MigrationInterface {
  name = 'AccountDueIndex1763910000000';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The build's lock blocks neither reads nor writes: it waits as long as it must for older
    // transactions to end, rather than throw a finished build away.
    await queryRunner.query(`SET lock_timeout = 0`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_account_due_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY webhook_events_account_due_idx ON webhook_events (account_id, next_attempt_at)
         WHERE delivery_status = 'pending'`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_released_idx`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_events_released_idx ON webhook_events (account_id)
         WHERE delivery_status = 'pending' AND cycle > 1 AND cycle_attempts = 0 AND next_attempt_at IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_account_due_idx`);
  }
}
