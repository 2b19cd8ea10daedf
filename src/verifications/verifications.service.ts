import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AccountsService } from 'src/accounts/accounts.service';
import { ApiError } from 'src/common/api-error';
import { CommitSettler } from 'src/database/commit-settler';
import { onPrimary, onReplica } from 'src/database/read-replica';
import { VerificationStatusHistoryRepository } from 'src/verifications/verification-status-history.repository';
import { Verification } from 'src/verifications/verification.entity';
import { VerificationRepository, verificationCommitted } from 'src/verifications/verification.repository';
import type { VerificationResponseDto } from 'src/verifications/verification-response.dto';
import { toVerificationResponse } from 'src/verifications/verification.mapper';
import { mergeApplicant } from 'src/verifications/verification-transition';
import { lockedTransitionStatements, pooledTransitionStatements } from 'src/verifications/verification-transition-sql';
import { transitionWithRetries } from 'src/verifications/verification-transition-tries';
import type { CreateVerificationDto, TransitionVerificationDto } from 'src/verifications/verifications.dto';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { eventCommitted } from 'src/webhooks/tables/webhook-event.repository';

@Injectable()
export class VerificationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly settler: CommitSettler,
    private readonly verifications: VerificationRepository,
    private readonly history: VerificationStatusHistoryRepository,
    private readonly accounts: AccountsService,
    @Inject(DeliveryQueue) private readonly deliveryQueue: DeliveryQueue,
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
    await this.settler.transaction(
      async (manager) => {
        await this.verifications.insert(manager, verification);
        await this.history.insert(manager, { verificationId: verification.id, version: 1, status: 'pending', at: now });
      },
      () => verificationCommitted(verification.id),
    );
    return toVerificationResponse(verification);
  }

  /**
   * In two round trips: an unlocked read, then the change, its history entry and its webhook event
   * in one statement guarded on the row being still as read (see transitionWithRetries). The event is
   * queued only after the write (a dead one too: the dashboard lists it as failed).
   */
  async transition(id: string, dto: TransitionVerificationDto): Promise<VerificationResponseDto> {
    const { verification, event } = await transitionWithRetries(id, dto, {
      unlocked: pooledTransitionStatements(this.settler),
      locked: (work) =>
        this.settler.transaction(
          (manager) => work(lockedTransitionStatements(manager)),
          (done) => (done ? eventCommitted(done.event.id) : null),
        ),
    });
    this.deliveryQueue.dispatchNew([event]);
    return toVerificationResponse(verification);
  }

  /**
   * The detail's JSON text: the stored text and the history, read in one statement (verification.repository.ts). Read on
   * a replica; with `minVersion` (read-your-writes), a replica that has not yet applied that version
   * (or the verification at all) is passed over for the primary.
   */
  async getForAccount(accountId: string, id: string, minVersion?: number): Promise<string> {
    const read = (manager: EntityManager) => this.verifications.detail(manager, accountId, id);
    let found = await onReplica(this.dataSource, read);
    if (minVersion !== undefined && (found === null || found.version < minVersion)) {
      found = await onPrimary(this.dataSource, read);
    }
    if (!found) throw ApiError.notFound('verification');
    return found.json;
  }
}
