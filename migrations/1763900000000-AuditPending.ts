import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `audit_pending`: where a change's audit entry is written, in the change's own transaction, without
 * touching the chain's head. The chainer (src/audit/audit-chainer.ts) then moves committed entries
 * into `audit_events` in batches, in `id` order, giving each its sequence and hash under the head's
 * lock: concurrent audited writes no longer queue on that one row lock until they commit, and an
 * entry is in the chain before the request that wrote it is answered (a reader chains whatever is
 * left before it reads).
 *
 * A new table only: no lock on existing data.
 */
export class AuditPending1763900000000 implements MigrationInterface {
  name = 'AuditPending1763900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE audit_pending (
        id bigserial PRIMARY KEY,
        entry_id uuid NOT NULL,
        at timestamptz(3) NOT NULL,
        actor_type varchar(16) NOT NULL,
        actor_id text,
        actor_name text,
        actor_via varchar(16) NOT NULL,
        action varchar(64) NOT NULL,
        outcome varchar(8) NOT NULL,
        target_type varchar(32),
        target_id text,
        account_id uuid,
        changes text[] NOT NULL DEFAULT '{}',
        request_id text,
        source_ip text
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE audit_pending`);
  }
}
