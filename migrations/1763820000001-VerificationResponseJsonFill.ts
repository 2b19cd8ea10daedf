import { MigrationInterface, QueryRunner } from 'typeorm';
import { backfillVerificationJson } from 'src/verifications/verification-json-backfill';

/**
 * Fills `verifications.response_json` for the rows that existed before it, with the service's own
 * writer, in batches of 1,000 rows, each its own transaction: no row is locked longer than its
 * batch, so status changes of the running release wait for one batch at most. Outside a migration
 * transaction for that reason; a run stopped half-way leaves texts that are right, and the next run
 * (or `npm run cli -- render-json`) writes the rest. 100,000 rows: see docs/performance.md.
 */
export class VerificationResponseJsonFill1763820000001 implements MigrationInterface {
  name = 'VerificationResponseJsonFill1763820000001';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    await backfillVerificationJson(queryRunner.connection, 1_000);
  }

  public async down(): Promise<void> {
    // The texts go with the column (the previous migration's down).
  }
}
