import type { EntityManager } from 'typeorm';
import { webhookUrlOf } from 'src/accounts/account.repository';
import type { CommitSettler } from 'src/database/commit-settler';
import { insertStatusHistoryFromSql } from 'src/verifications/verification-status-history.repository';
import {
  UPDATE_IF_UNCHANGED_PARAMS,
  updateIfUnchangedSql,
  updateIfUnchangedValues,
  verificationByIdSql,
} from 'src/verifications/verification.repository';
import type { Verification } from 'src/verifications/verification.entity';
import { eventCommitted, insertOutboxEventFrom, outboxEventValues } from 'src/webhooks/tables/webhook-event.repository';
import type { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';

/** A verification as a status change reads it: the row, with its account's webhook URL for the event. */
export type TransitionSource = Verification & { webhookUrl: string | null };

const READ_SQL = verificationByIdSql((accountId) => `${webhookUrlOf(accountId)} AS "webhookUrl"`);

/**
 * The change, its history row and its webhook event, composed from the three owners' fragments into
 * one statement, written only if the row is still as it was read: the same version (every status
 * change bumps it) and not redacted (redaction bumps no version, and a change read before it would
 * write the erased applicant back). Nothing is written unless the update is. One row back when
 * written, none when another change or a redaction won.
 */
const WRITE_SQL = `
  WITH updated AS (
    ${updateIfUnchangedSql()}),
  history AS (
    ${insertStatusHistoryFromSql('updated')}),
  outbox AS (
    ${insertOutboxEventFrom('updated', UPDATE_IF_UNCHANGED_PARAMS + 1)})
  SELECT version FROM updated`;

/** The composed statements, for their snapshots in sql/ (test/sql-snapshots.e2e-spec.ts). */
export const TRANSITION_SQL = { read: READ_SQL, readLocked: `${READ_SQL} FOR UPDATE`, write: WRITE_SQL };

/** The reads and writes of one try at a status change. */
export interface TransitionStatements {
  read(id: string): Promise<TransitionSource | undefined>;
  /** False when the row is no longer as `read` was (the try lost a race). */
  write(read: Verification, next: Verification, event: WebhookEvent): Promise<boolean>;
}

function writeValues(read: Verification, next: Verification, event: WebhookEvent): unknown[] {
  return [...updateIfUnchangedValues(read, next), ...outboxEventValues(event)];
}

/**
 * Unlocked: two autocommit round trips on the raw pool, each a named prepared statement (parsed and
 * planned once per connection). The write is atomic on its own, so no transaction is needed; if its
 * answer is lost, whether it committed is its event's being there (commit-settler.ts).
 */
export function pooledTransitionStatements(settler: CommitSettler): TransitionStatements {
  return {
    read: async (id) =>
      (await settler.pool.prepared<TransitionSource>('verification-transition-read', READ_SQL, [id]))[0],
    write: (read, next, event) =>
      settler.statement(
        async (client) =>
          (
            await client.query({
              name: 'verification-transition-write',
              text: WRITE_SQL,
              values: writeValues(read, next, event),
            })
          ).rows.length > 0,
        eventCommitted(event.id),
        true,
      ),
  };
}

/** In the caller's transaction, the row locked by the read: the write cannot lose. */
export function lockedTransitionStatements(manager: EntityManager): TransitionStatements {
  return {
    read: async (id) => ((await manager.query(TRANSITION_SQL.readLocked, [id])) as TransitionSource[])[0],
    write: async (read, next, event) =>
      ((await manager.query(WRITE_SQL, writeValues(read, next, event))) as unknown[]).length > 0,
  };
}
