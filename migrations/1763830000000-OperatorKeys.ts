import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operator keys, for scripts: each key is stored as the SHA-256 of its text only (the key is 256
 * random bits, so a plain hash is as strong as a slow one), with its name, one role and its expiry.
 * A new table: no lock on any existing one.
 */
export class OperatorKeys1763830000000 implements MigrationInterface {
  name = 'OperatorKeys1763830000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE operator_keys (
        id uuid PRIMARY KEY,
        name varchar(200) NOT NULL,
        role varchar(16) NOT NULL,
        key_hash char(64) NOT NULL,
        created_at timestamptz(3) NOT NULL,
        expires_at timestamptz(3) NOT NULL,
        last_used_at timestamptz(3),
        revoked_at timestamptz(3),
        CONSTRAINT operator_keys_key_hash_key UNIQUE (key_hash),
        CONSTRAINT operator_keys_role_check CHECK (role IN ('viewer', 'operator', 'compliance', 'auditor', 'admin'))
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE operator_keys`);
  }
}
