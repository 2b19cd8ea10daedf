import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The relay takes each account's share of its overdue events by walking the account's due events in
 * due order, one index entry at a time. Equal due times (a relay pass makes hundreds of events due at
 * the same instant) need the id to order them, and events waiting their turn (no due time) must not
 * lie in the walk's way, so the index on (account_id, next_attempt_at) of pending events becomes one
 * on (account_id, next_attempt_at, id) of pending events with a due time. The account's window count
 * (due events only) reads it as it read the old one.
 *
 * Built CONCURRENTLY (outside a transaction), like the index it replaces: the build reads the whole
 * table (minutes at a year of data) but no write waits for it, and the index itself, of pending events
 * only, stays small. An index left invalid by a failed build is dropped and built again on the next run.
 */
export class AccountDueOrderIndex1763920000000 implements MigrationInterface {
  name = 'AccountDueOrderIndex1763920000000';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The build's lock blocks neither reads nor writes: it waits as long as it must for older
    // transactions to end, rather than throw a finished build away.
    await queryRunner.query(`SET lock_timeout = 0`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_account_due_order_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY webhook_events_account_due_order_idx ON webhook_events (account_id, next_attempt_at, id)
         WHERE delivery_status = 'pending' AND next_attempt_at IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_account_due_idx`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_events_account_due_idx ON webhook_events (account_id, next_attempt_at)
         WHERE delivery_status = 'pending'`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_account_due_order_idx`);
  }
}
