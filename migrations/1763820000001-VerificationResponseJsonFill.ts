import { MigrationInterface } from 'typeorm';

/**
 * Kept, empty, under its name so that databases which ran it and databases which did not agree on
 * the migrations applied. Migrations stand still: none imports the service's code, so none changes
 * when that code does. The stored JSON of rows written before `response_json` existed (or by an
 * older release during a rolling upgrade) is written by the service's own writer outside the
 * migrations, with `npm run cli -- render-json` (CONTRIBUTING.md, "Writing a migration"; the operator
 * guide's upgrade steps); until then readers render such rows from their columns.
 */
export class VerificationResponseJsonFill1763820000001 implements MigrationInterface {
  name = 'VerificationResponseJsonFill1763820000001';
  transaction = false;

  public async up(): Promise<void> {
    // Nothing: see above.
  }

  public async down(): Promise<void> {
    // Nothing: see above.
  }
}
