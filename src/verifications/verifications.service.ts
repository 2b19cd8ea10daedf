import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AccountsService } from 'src/accounts/accounts.service';
import { ApiError } from 'src/common/api-error';
import { PgPool } from 'src/database/pg-pool';
import { onPrimary, onReplica } from 'src/database/read-replica';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import { Verification } from 'src/verifications/verification.entity';
import {
  VerificationDetailResponseDto,
  VerificationResponseDto,
  toVerificationDetail,
  toVerificationResponse,
} from 'src/verifications/verification.mapper';
import { applyTransition, checkTransition, mergeApplicant } from 'src/verifications/verification-transition';
import {
  type TransitionStatements,
  lockedTransitionStatements,
  pooledTransitionStatements,
} from 'src/verifications/verification-transition-sql';
import type { CreateVerificationDto, TransitionVerificationDto } from 'src/verifications/verifications.dto';
import type { DeliveryJobSource } from 'src/webhooks/delivery-job';
import { buildOutboxEvent, outboxJobSource } from 'src/webhooks/outbox-event';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';

/**
 * Tries of a status change without a lock before the last one, which locks the row and so cannot
 * lose: a change under heavy contention costs more round trips, but is never refused for it.
 */
const UNLOCKED_TRIES = 9;

@Injectable()
export class VerificationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: PgPool,
    private readonly accounts: AccountsService,
    @Inject(WebhookDispatcher) private readonly dispatcher: WebhookDispatcher,
  ) {}

  async create(dto: CreateVerificationDto): Promise<VerificationResponseDto> {
    const accountId = dto.account_id.toLowerCase();
    if (!(await this.accounts.exists(accountId))) throw ApiError.notFound('account');
    const now = new Date();
    const verification = Object.assign(new Verification(), {
      id: uuidv7(),
      accountId,
      externalUserId: dto.external_user_id,
      status: 'pending',
      version: 1,
      createdAt: now,
      updatedAt: now,
      submittedAt: null,
      decidedAt: null,
      applicant: mergeApplicant(null, dto.applicant),
      document: null,
      rejectionReasons: [],
      metadata: dto.metadata ?? {},
      redactedAt: null,
    } satisfies Verification);
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(Verification, verification);
      await manager.insert(VerificationStatusHistory, {
        verificationId: verification.id,
        version: 1,
        status: 'pending',
        at: now,
      });
    });
    return toVerificationResponse(verification);
  }

  /**
   * Read the row (no lock), check the move (nothing changes unless every check passes), then write
   * the change, its history entry and its webhook event in one statement guarded on the row being
   * still as read. A lost race (another change, or a redaction, in between) starts again from the
   * read, so a retry answers as the old lock-and-wait did: the same checks on the row as it now is.
   * After UNLOCKED_TRIES lost races the last try runs in a transaction holding the row lock. The event
   * is queued only after the write (a dead one too: the dashboard lists it as failed).
   */
  async transition(id: string, dto: TransitionVerificationDto): Promise<VerificationResponseDto> {
    for (let tries = 1; ; tries += 1) {
      const done =
        tries <= UNLOCKED_TRIES
          ? await this.tryTransition(pooledTransitionStatements(this.pool), id, dto)
          : await this.dataSource.transaction((manager) =>
              this.tryTransition(lockedTransitionStatements(manager), id, dto),
            );
      if (done) {
        this.dispatcher.dispatch([done.event]);
        return toVerificationResponse(done.verification);
      }
    }
  }

  /** One read-decide-write; null when the write found the row changed since the read. */
  private async tryTransition(
    statements: TransitionStatements,
    id: string,
    dto: TransitionVerificationDto,
  ): Promise<{ verification: Verification; event: DeliveryJobSource } | null> {
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
    return { verification: next, event: outboxJobSource(change, built, webhookUrl) };
  }

  /**
   * Read on a replica; with `minVersion` (read-your-writes), a replica that has not yet applied
   * that version (or the verification at all) is passed over for the primary.
   */
  async getForAccount(accountId: string, id: string, minVersion?: number): Promise<VerificationDetailResponseDto> {
    const read = async (manager: EntityManager): Promise<VerificationDetailResponseDto | null> => {
      const verification = await manager.getRepository(Verification).findOneBy({ id, accountId });
      if (!verification) return null;
      const history = await manager
        .getRepository(VerificationStatusHistory)
        .find({ where: { verificationId: id }, order: { version: 'ASC' } });
      return toVerificationDetail(verification, history);
    };
    let found = await onReplica(this.dataSource, read);
    if (minVersion !== undefined && (found === null || found.version < minVersion)) {
      found = await onPrimary(this.dataSource, read);
    }
    if (!found) throw ApiError.notFound('verification');
    return found;
  }
}
