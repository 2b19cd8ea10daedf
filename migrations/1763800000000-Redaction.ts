import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Redaction and retention. `verifications.redacted_at` marks an erased verification; on
 * `webhook_events` it marks a payload rewritten by that erasure (an attempt recorded afterwards
 * keeps no response excerpt). The two partial indexes are what the retention passes walk, oldest
 * first, without scanning the tables: verifications not yet redacted by their age (`decided_at`, or
 * `updated_at` when never decided), and finished events by creation time.
 *
 * Adding the nullable columns is instant; each plain CREATE INDEX blocks writes to its table while
 * it builds (a few seconds per million rows on two cores).
 */
export class Redaction1763800000000 implements MigrationInterface {
  name = 'Redaction1763800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE verifications ADD COLUMN redacted_at timestamptz(3)`);
    await queryRunner.query(`ALTER TABLE webhook_events ADD COLUMN redacted_at timestamptz(3)`);
    await queryRunner.query(
      `CREATE INDEX verifications_retention_idx ON verifications ((coalesce(decided_at, updated_at))) WHERE redacted_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_events_retention_idx ON webhook_events (created_at) WHERE delivery_status <> 'pending'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX webhook_events_retention_idx`);
    await queryRunner.query(`DROP INDEX verifications_retention_idx`);
    await queryRunner.query(`ALTER TABLE webhook_events DROP COLUMN redacted_at`);
    await queryRunner.query(`ALTER TABLE verifications DROP COLUMN redacted_at`);
  }
}
