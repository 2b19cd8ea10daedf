import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookOutbox1763780000001 implements MigrationInterface {
  name = 'WebhookOutbox1763780000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // body is the exact text POSTed, frozen when the status changed; cycle counts redeliveries.
    await queryRunner.query(`
      CREATE TABLE webhook_events (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts (id),
        verification_id uuid NOT NULL,
        type varchar(64) NOT NULL,
        body text NOT NULL,
        created_at timestamptz(3) NOT NULL,
        delivery_status varchar(16) NOT NULL CHECK (delivery_status IN ('pending', 'delivered', 'failed')),
        attempt_count integer NOT NULL DEFAULT 0,
        cycle integer NOT NULL DEFAULT 1,
        cycle_attempts integer NOT NULL DEFAULT 0,
        last_attempt_at timestamptz(3),
        last_response_status integer,
        last_error varchar(500),
        next_attempt_at timestamptz(3),
        delivered_at timestamptz(3)
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_events_account_created_idx ON webhook_events (account_id, created_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_events_account_status_created_idx ON webhook_events (account_id, delivery_status, created_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_events_account_verification_idx ON webhook_events (account_id, verification_id, created_at, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_events_due_idx ON webhook_events (next_attempt_at) WHERE delivery_status = 'pending'`,
    );

    await queryRunner.query(`
      CREATE TABLE webhook_attempts (
        event_id uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
        number integer NOT NULL,
        at timestamptz(3) NOT NULL,
        response_status integer,
        duration_ms integer NOT NULL,
        error varchar(500),
        response_body varchar(1024),
        PRIMARY KEY (event_id, number)
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_attempts`);
    await queryRunner.query(`DROP TABLE webhook_events`);
  }
}
