import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763780000000 implements MigrationInterface {
  name = 'InitialSchema1763780000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);

    await queryRunner.query(`
      CREATE TABLE accounts (
        id uuid PRIMARY KEY,
        name varchar(200) NOT NULL,
        webhook_url varchar(2048),
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`);

    // expires_at NULL marks the current secret; a rotated-out one keeps working until expires_at.
    await queryRunner.query(`
      CREATE TABLE account_secrets (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        secret_hash bytea NOT NULL,
        secret_ciphertext text NOT NULL,
        created_at timestamptz(3) NOT NULL,
        expires_at timestamptz(3)
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX account_secrets_hash_key ON account_secrets (secret_hash)`);
    await queryRunner.query(`CREATE INDEX account_secrets_account_idx ON account_secrets (account_id, created_at)`);

    await queryRunner.query(`
      CREATE TABLE verifications (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts (id),
        external_user_id varchar(255) NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('pending', 'processing', 'approved', 'rejected')),
        version integer NOT NULL CHECK (version >= 1),
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL,
        submitted_at timestamptz(3),
        decided_at timestamptz(3),
        applicant jsonb,
        document jsonb,
        rejection_reasons text[] NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL DEFAULT '{}',
        search_text text GENERATED ALWAYS AS (
          lower(external_user_id)
          || chr(31) || lower(
               CASE
                 WHEN applicant->>'first_name' IS NOT NULL AND applicant->>'last_name' IS NOT NULL
                   THEN (applicant->>'first_name') || ' ' || (applicant->>'last_name')
                 ELSE coalesce(applicant->>'first_name', applicant->>'last_name', '')
               END)
          || chr(31) || lower(coalesce(applicant->>'email', ''))
        ) STORED
      )`);
    // Every list query is scoped by account first; each sort order has its own keyset index.
    await queryRunner.query(
      `CREATE INDEX verifications_account_created_idx ON verifications (account_id, created_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX verifications_account_updated_idx ON verifications (account_id, updated_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX verifications_account_status_created_idx ON verifications (account_id, status, created_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX verifications_account_status_updated_idx ON verifications (account_id, status, updated_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX verifications_account_external_user_idx ON verifications (account_id, external_user_id, created_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX verifications_account_search_idx ON verifications USING gin (account_id, search_text gin_trgm_ops)`,
    );

    await queryRunner.query(`
      CREATE TABLE verification_status_history (
        verification_id uuid NOT NULL REFERENCES verifications (id) ON DELETE CASCADE,
        version integer NOT NULL,
        status varchar(16) NOT NULL,
        at timestamptz(3) NOT NULL,
        PRIMARY KEY (verification_id, version)
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE verification_status_history`);
    await queryRunner.query(`DROP TABLE verifications`);
    await queryRunner.query(`DROP TABLE account_secrets`);
    await queryRunner.query(`DROP TABLE accounts`);
  }
}
