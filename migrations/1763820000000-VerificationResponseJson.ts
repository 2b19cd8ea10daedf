import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `verifications.response_json`: the verification's contract JSON text, written by the service's one
 * writer (verificationJson, src/verifications/verification.mapper.ts) in the statement of every
 * change, so that a list page or a detail sends stored text and PostgreSQL renders nothing per row.
 *
 * The previous release keeps working beside this schema during a rolling upgrade (and after a roll
 * back) without knowing the column: its inserts leave it null, and the trigger nulls the text of
 * any update that does not write it, so a text is never older than its row. Readers render a null
 * text from the row's columns; `npm run cli -- render-json` (and the next migration) writes them.
 * The WHEN clause is evaluated without calling the function, so an update that writes the text
 * (every one this release makes) costs one comparison.
 *
 * Adding a nullable column is instant. The partial index starts with every existing row and
 * empties as the texts are written; it is built CONCURRENTLY, outside a transaction (each step safe to
 * run again): built plainly, as first written, it stopped status changes for 0.9 s on 500,000
 * verifications (`npm run bench:year`), about 9 s at a year.
 */
export class VerificationResponseJson1763820000000 implements MigrationInterface {
  name = 'VerificationResponseJson1763820000000';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The column and the trigger lock verifications for an instant; waited for, such a lock stops every
    // read and status change queued behind it, so each waits 500 ms at most and gives up (the runner
    // runs the migration again). The index build blocks neither, and waits as long as it must.
    await queryRunner.query(`SET lock_timeout = '500ms'`);
    await queryRunner.query(`ALTER TABLE verifications ADD COLUMN IF NOT EXISTS response_json text`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION verifications_response_json_stale() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.response_json := NULL;
        RETURN NEW;
      END $$`);
    // One statement, so that a run made again never leaves the table without the trigger (PostgreSQL 14+).
    await queryRunner.query(`
      CREATE OR REPLACE TRIGGER verifications_response_json_stale BEFORE UPDATE ON verifications FOR EACH ROW
        WHEN (NEW.response_json IS NOT DISTINCT FROM OLD.response_json AND NEW.response_json IS NOT NULL)
        EXECUTE FUNCTION verifications_response_json_stale()`);
    await queryRunner.query(`SET lock_timeout = 0`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS verifications_response_json_missing_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY verifications_response_json_missing_idx ON verifications (id) WHERE response_json IS NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER verifications_response_json_stale ON verifications`);
    await queryRunner.query(`DROP FUNCTION verifications_response_json_stale()`);
    await queryRunner.query(`DROP INDEX verifications_response_json_missing_idx`);
    await queryRunner.query(`ALTER TABLE verifications DROP COLUMN response_json`);
  }
}
