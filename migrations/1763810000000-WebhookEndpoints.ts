import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook endpoint as a resource: its enabled/disabled state (`webhook_endpoints`), its health
 * (`webhook_endpoint_health`), and the `held` delivery status of events waiting for a disabled
 * endpoint. Rows are written when first needed, so existing accounts need none. Two partial indexes
 * keep a release's steps cheap however many events it holds: the released events still waiting
 * their turn (pending, no due time) in creation order, and the cycles let through but not yet
 * attempted (a new event is in neither: its cycle is 1 and it is due).
 *
 * Online on a large webhook_events (outside a transaction, each step safe to run again): the check
 * constraint is replaced NOT VALID in one brief ALTER (no scan under its lock) and validated after,
 * which blocks neither reads nor writes; the indexes are built CONCURRENTLY. Replaced in one
 * validating ALTER and built plainly, as first written, they stopped reads and status changes for
 * 1.9 s on 1.5 M events (`npm run bench:year`), about 15 s at a year. The brief locks are waited
 * for 500 ms at most: a long transaction (a report, a backup) holding webhook_events would otherwise
 * stop every read queued behind the ALTER for as long as it runs (test/migrations-online.e2e-spec.ts).
 */
export class WebhookEndpoints1763810000000 implements MigrationInterface {
  name = 'WebhookEndpoints1763810000000';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The foreign keys lock accounts against writes, and the ALTER locks webhook_events against
    // everything, each for an instant; but a lock waited for stops whatever queues behind it, so each
    // waits at most 500 ms and gives up (the runner runs the migration again).
    await queryRunner.query(`SET lock_timeout = '500ms'`);
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS webhook_endpoints (
        account_id uuid PRIMARY KEY,
        disabled_reason varchar(16),
        disabled_at timestamptz(3),
        CONSTRAINT webhook_endpoints_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id),
        CONSTRAINT webhook_endpoints_disabled_check CHECK ((disabled_reason IS NULL) = (disabled_at IS NULL)),
        CONSTRAINT webhook_endpoints_disabled_reason_check
          CHECK (disabled_reason IN ('gone', 'failing', 'client', 'operator'))
      )`);
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS webhook_endpoint_health (
        account_id uuid PRIMARY KEY,
        last_success_at timestamptz(3),
        last_failure_at timestamptz(3),
        failing_since timestamptz(3),
        consecutive_failures integer NOT NULL DEFAULT 0,
        CONSTRAINT webhook_endpoint_health_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id)
      )`);
    await queryRunner.query(
      `ALTER TABLE webhook_events DROP CONSTRAINT IF EXISTS webhook_events_delivery_status_check,
         ADD CONSTRAINT webhook_events_delivery_status_check
         CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'held')) NOT VALID`,
    );
    // The validation and the builds block neither reads nor writes, and wait as long as they must.
    await queryRunner.query(`SET lock_timeout = 0`);
    await queryRunner.query(`ALTER TABLE webhook_events VALIDATE CONSTRAINT webhook_events_delivery_status_check`);
    // A build that failed half way leaves an invalid index: dropped, then built again.
    for (const [name, definition] of [
      [
        'webhook_events_waiting_idx',
        `(account_id, created_at, id) WHERE delivery_status = 'pending' AND next_attempt_at IS NULL`,
      ],
      [
        'webhook_events_released_idx',
        `(account_id) WHERE delivery_status = 'pending' AND cycle > 1 AND cycle_attempts = 0 AND next_attempt_at IS NOT NULL`,
      ],
    ]) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY ${name} ON webhook_events ${definition}`);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX webhook_events_released_idx`);
    await queryRunner.query(`DROP INDEX webhook_events_waiting_idx`);
    await queryRunner.query(
      `UPDATE webhook_events SET delivery_status = 'pending', next_attempt_at = now() WHERE delivery_status = 'held'`,
    );
    await queryRunner.query(`ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_delivery_status_check`);
    await queryRunner.query(
      `ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_delivery_status_check
         CHECK (delivery_status IN ('pending', 'delivered', 'failed'))`,
    );
    await queryRunner.query(`DROP TABLE webhook_endpoint_health`);
    await queryRunner.query(`DROP TABLE webhook_endpoints`);
  }
}
