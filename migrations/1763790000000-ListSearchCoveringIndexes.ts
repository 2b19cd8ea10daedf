import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `q` on the list route: the keyset indexes carry search_text, so a search is an index-only walk
 * in sort order that stops after one page of matches, instead of fetching every match from the
 * heap (the trigram index) and sorting them. Each replaces the plain keyset index of its sort
 * order, which it also serves. The trigram index stays for rare terms, where walking a large
 * account would be slower; telling the two apart needs a finer sample of search_text than the
 * default statistics target gives (see docs/performance.md).
 *
 * Plain CREATE INDEX: it blocks writes to verifications while it builds (about 5 s per index at a
 * million rows on two cores).
 */
export class ListSearchCoveringIndexes1763790000000 implements MigrationInterface {
  name = 'ListSearchCoveringIndexes1763790000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX verifications_account_created_search_idx ON verifications (account_id, created_at, id) INCLUDE (search_text)`,
    );
    await queryRunner.query(`DROP INDEX verifications_account_created_idx`);
    await queryRunner.query(
      `CREATE INDEX verifications_account_updated_search_idx ON verifications (account_id, updated_at, id) INCLUDE (search_text)`,
    );
    await queryRunner.query(`DROP INDEX verifications_account_updated_idx`);
    await queryRunner.query(`ALTER TABLE verifications ALTER COLUMN search_text SET STATISTICS 1000`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE verifications ALTER COLUMN search_text SET STATISTICS -1`);
    await queryRunner.query(
      `CREATE INDEX verifications_account_updated_idx ON verifications (account_id, updated_at, id)`,
    );
    await queryRunner.query(`DROP INDEX verifications_account_updated_search_idx`);
    await queryRunner.query(
      `CREATE INDEX verifications_account_created_idx ON verifications (account_id, created_at, id)`,
    );
    await queryRunner.query(`DROP INDEX verifications_account_created_search_idx`);
  }
}
