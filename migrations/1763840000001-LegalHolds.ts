import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Legal holds: at most one per verification (a second PUT replaces it); while `until` is null or in
 * the future, the verification is neither redacted on request nor by retention. A new table: no
 * lock on existing data (the foreign key's check on an empty table is instant).
 */
export class LegalHolds1763840000001 implements MigrationInterface {
  name = 'LegalHolds1763840000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The foreign key locks verifications against status changes for an instant; waited for, that lock
    // stops every change queued behind it, so it waits 500 ms at most (the runner runs the migration again).
    await queryRunner.query(`SET LOCAL lock_timeout = '500ms'`);
    await queryRunner.query(`
      CREATE TABLE verification_legal_holds (
        verification_id uuid PRIMARY KEY,
        reason text NOT NULL,
        case_reference text,
        until timestamptz(3),
        placed_at timestamptz(3) NOT NULL,
        placed_by_type varchar(16) NOT NULL,
        placed_by_id text,
        placed_by_name text,
        CONSTRAINT verification_legal_holds_verification_id_fkey
          FOREIGN KEY (verification_id) REFERENCES verifications (id) ON DELETE CASCADE
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE verification_legal_holds`);
  }
}
