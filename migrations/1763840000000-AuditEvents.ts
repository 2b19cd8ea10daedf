import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail: `audit_events`, an append-only hash chain, and `audit_chain`, its one-row head
 * (the last sequence and hash, locked FOR UPDATE by every writer so sequences have no gap and each
 * entry hashes its predecessor; and how far retention has pruned the start of the chain).
 *
 * A trigger refuses UPDATE, TRUNCATE and DELETE on `audit_events` for every role, the owner
 * included. The one DELETE it lets through is retention's: the retention pass, holding the head's
 * lock, writes its cut-off (now - AUDIT_RETENTION_DAYS) into the head, deletes the oldest entries
 * before it, records the last sequence it removed (`pruned_through`) and clears the cut-off in the
 * same transaction. With no cut-off set (every other moment, for every other session) or for an
 * entry at or after it, DELETE raises. A role that may drop the trigger can do anything; the chain
 * is what makes that visible (`audit verify`).
 *
 * New tables only: no lock on existing data.
 */
export class AuditEvents1763840000000 implements MigrationInterface {
  name = 'AuditEvents1763840000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // Only tables of its own transaction, which no other session can lock: the limit is never reached.
    await queryRunner.query(`SET LOCAL lock_timeout = '500ms'`);
    await queryRunner.query(`
      CREATE TABLE audit_events (
        sequence bigint PRIMARY KEY,
        id uuid NOT NULL,
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
        source_ip text,
        previous_hash char(64) NOT NULL,
        hash char(64) NOT NULL,
        CONSTRAINT audit_events_id_key UNIQUE (id),
        CONSTRAINT audit_events_outcome_check CHECK (outcome IN ('success', 'denied')),
        CONSTRAINT audit_events_actor_type_check CHECK (actor_type IN ('operator', 'client', 'break_glass', 'system'))
      )`);
    await queryRunner.query(`CREATE INDEX audit_events_at_idx ON audit_events (at, sequence)`);
    await queryRunner.query(`CREATE INDEX audit_events_account_idx ON audit_events (account_id, sequence)`);
    await queryRunner.query(`CREATE INDEX audit_events_actor_idx ON audit_events (actor_id, sequence)`);
    await queryRunner.query(`CREATE INDEX audit_events_target_idx ON audit_events (target_id, sequence)`);
    await queryRunner.query(`
      CREATE TABLE audit_chain (
        id smallint PRIMARY KEY CHECK (id = 1),
        last_sequence bigint NOT NULL,
        last_hash char(64) NOT NULL,
        pruned_through bigint NOT NULL DEFAULT 0,
        retention_cutoff timestamptz(3)
      )`);
    await queryRunner.query(`INSERT INTO audit_chain (id, last_sequence, last_hash) VALUES (1, 0, repeat('0', 64))`);
    await queryRunner.query(`
      CREATE FUNCTION audit_events_guard() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        cutoff timestamptz;
      BEGIN
        IF TG_OP = 'DELETE' THEN
          SELECT retention_cutoff INTO cutoff FROM audit_chain WHERE id = 1;
          IF cutoff IS NOT NULL AND OLD.at < cutoff THEN
            RETURN OLD;
          END IF;
        END IF;
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION audit_events_guard()`);
    await queryRunner.query(`
      CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
        FOR EACH STATEMENT EXECUTE FUNCTION audit_events_guard()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE audit_events`);
    await queryRunner.query(`DROP TABLE audit_chain`);
    await queryRunner.query(`DROP FUNCTION audit_events_guard()`);
  }
}
