import { ApiError } from 'src/common/api-error';
import { applyTransition, checkTransition } from 'src/verifications/verification-transition';
import type { TransitionStatements } from 'src/verifications/verification-transition-sql';
import type { Verification } from 'src/verifications/verification.entity';
import { toVerificationResponse } from 'src/verifications/verification.mapper';
import type { TransitionVerificationDto } from 'src/verifications/verifications.dto';
import { type DeliveryJobSource, deliveryJobSource } from 'src/webhooks/tables/event-rows';
import { buildOutboxEvent } from 'src/webhooks/outbox/outbox-event';

/**
 * Tries of a status change without a lock before the last one, which locks the row and so cannot
 * lose: a change under heavy contention costs more round trips, but is never refused for it.
 */
export const UNLOCKED_TRIES = 9;

/** The two ways to run a try: unlocked statements, or statements in a transaction that locks the row. */
export interface TransitionPaths {
  unlocked: TransitionStatements;
  locked(work: (statements: TransitionStatements) => Promise<TransitionDone | null>): Promise<TransitionDone | null>;
}

/** A change written: the verification as it now is, and the job of its event, to queue. */
export interface TransitionDone {
  verification: Verification;
  event: DeliveryJobSource;
}

/**
 * Read, check (nothing changes unless every check passes), write guarded on the row being still as
 * read. A lost race (another change, or a redaction, in between) starts again from the read, so the
 * answer is what the row lock used to give: the same checks on the row as it now is.
 */
export async function transitionWithRetries(
  id: string,
  dto: TransitionVerificationDto,
  paths: TransitionPaths,
): Promise<TransitionDone> {
  for (let tries = 1; ; tries += 1) {
    const done =
      tries <= UNLOCKED_TRIES
        ? await tryTransition(paths.unlocked, id, dto)
        : await paths.locked((statements) => tryTransition(statements, id, dto));
    if (done) return done;
  }
}

/** One read-check-write; null when the write found the row changed since the read. */
async function tryTransition(
  statements: TransitionStatements,
  id: string,
  dto: TransitionVerificationDto,
): Promise<TransitionDone | null> {
  const row = await statements.read(id);
  if (!row) throw ApiError.notFound('verification');
  const { webhookUrl, ...current } = row;
  checkTransition(current, dto);
  const next = applyTransition(current, dto, new Date());
  const change = {
    accountId: next.accountId,
    verificationId: id,
    previousStatus: current.status,
    verification: toVerificationResponse(next),
  };
  const built = buildOutboxEvent(change, webhookUrl, next.updatedAt);
  if (!(await statements.write(current, next, built))) return null;
  return { verification: next, event: deliveryJobSource({ ...built, webhookUrl }) };
}
