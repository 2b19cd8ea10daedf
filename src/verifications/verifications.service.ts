import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AccountsService } from 'src/accounts/accounts.service';
import { ApiError } from 'src/common/api-error';
import { onReplica } from 'src/database/read-replica';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import { VERIFICATION_COLUMNS, Verification } from 'src/verifications/verification.entity';
import {
  VerificationDetailResponseDto,
  VerificationResponseDto,
  toVerificationDetail,
  toVerificationResponse,
} from 'src/verifications/verification.mapper';
import { canTransition, timestampsAfter } from 'src/verifications/verification-state-machine';
import type { Applicant } from 'src/verifications/verification.types';
import type { ApplicantDto, CreateVerificationDto, TransitionVerificationDto } from 'src/verifications/verifications.dto';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { WebhookOutboxService } from 'src/webhooks/webhook-outbox.service';

// The row, locked for the change, with its account's webhook URL for the outbox row.
const LOCK_SQL = `
  SELECT ${VERIFICATION_COLUMNS}, (SELECT webhook_url FROM accounts WHERE accounts.id = verifications.account_id) AS "webhookUrl"
    FROM verifications WHERE id = $1 FOR UPDATE`;

// The change, its history entry and its outbox event in one statement (one round trip instead of
// three, inside the transaction that holds the row lock).
const TRANSITION_SQL = `
  WITH updated AS (
    UPDATE verifications
       SET status = $2, version = $3, updated_at = $4, submitted_at = $5, decided_at = $6,
           rejection_reasons = $7::text[], applicant = $8::jsonb, document = $9::jsonb
     WHERE id = $1
    RETURNING id),
  history AS (
    INSERT INTO verification_status_history (verification_id, version, status, at)
    SELECT id, $3::integer, $2::varchar, $4::timestamptz FROM updated)
  INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error, next_attempt_at)
  SELECT $10::uuid, $11::uuid, id, $12::varchar, $13::text, $4::timestamptz, $14::varchar, $15::varchar, $16::timestamptz FROM updated`;

function mergeApplicant(current: Applicant | null, patch: ApplicantDto | null | undefined): Applicant | null {
  if (patch === undefined) return current;
  if (patch === null) return null;
  const base: Applicant = current ?? { first_name: null, last_name: null, date_of_birth: null, email: null };
  return {
    first_name: patch.first_name !== undefined ? patch.first_name : base.first_name,
    last_name: patch.last_name !== undefined ? patch.last_name : base.last_name,
    date_of_birth: patch.date_of_birth !== undefined ? patch.date_of_birth : base.date_of_birth,
    email: patch.email !== undefined ? patch.email : base.email,
  };
}

@Injectable()
export class VerificationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly outbox: WebhookOutboxService,
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
    } satisfies Verification);
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(Verification, verification);
      await manager.insert(VerificationStatusHistory, { verificationId: verification.id, version: 1, status: 'pending', at: now });
    });
    return toVerificationResponse(verification);
  }

  /**
   * One transaction: lock the row, check version, then the state machine, then the rejection
   * reasons (any error rolls back, so nothing changes), update, append history,
   * and write the webhook event. The event is queued only after the commit.
   */
  async transition(id: string, dto: TransitionVerificationDto): Promise<VerificationResponseDto> {
    const reasons = dto.rejection_reasons ?? [];
    const { verification, eventId } = await this.dataSource.transaction(async (manager) => {
      const [current] = (await manager.query(LOCK_SQL, [id])) as (Verification & { webhookUrl: string | null })[];
      if (!current) throw ApiError.notFound('verification');
      if (dto.expected_version !== undefined && dto.expected_version !== current.version) {
        throw new ApiError('version_conflict', `expected_version is ${dto.expected_version} but the verification is at version ${current.version}`, [
          { field: 'expected_version', issue: `does not match the current version ${current.version}` },
        ]);
      }
      if (!canTransition(current.status, dto.status)) {
        throw new ApiError('invalid_transition', `Cannot move a verification from ${current.status} to ${dto.status}`, [
          { field: 'status', issue: `cannot move from ${current.status} to ${dto.status}` },
        ]);
      }
      // The reasons rules are about a move the state machine allows: a forbidden one is 409 whatever it carries.
      if (dto.status === 'rejected' && reasons.length === 0) {
        throw ApiError.validation('rejection_reasons', 'must not be empty when status is rejected');
      }
      if (dto.status !== 'rejected' && reasons.length > 0) {
        throw ApiError.validation('rejection_reasons', 'must be empty unless status is rejected');
      }
      const { webhookUrl, ...row } = current;
      const previousStatus = row.status;
      const at = new Date(Math.max(Date.now(), row.updatedAt.getTime()));
      const { submittedAt, decidedAt } = timestampsAfter(dto.status, row, at);
      const next: Verification = Object.assign(new Verification(), row, {
        status: dto.status,
        version: row.version + 1,
        updatedAt: at,
        submittedAt,
        decidedAt,
        rejectionReasons: reasons,
        applicant: mergeApplicant(row.applicant, dto.applicant),
        document: dto.document ? { type: dto.document.type, country: dto.document.country } : row.document,
      });
      const event = this.outbox.build({ accountId: next.accountId, verificationId: id, previousStatus, verification: toVerificationResponse(next) }, webhookUrl, at);
      await manager.query(TRANSITION_SQL, [
        id,
        next.status,
        next.version,
        at,
        next.submittedAt,
        next.decidedAt,
        next.rejectionReasons,
        next.applicant === null ? null : JSON.stringify(next.applicant),
        next.document === null ? null : JSON.stringify(next.document),
        event.id,
        event.accountId,
        event.type,
        event.body,
        event.deliveryStatus,
        event.lastError,
        event.nextAttemptAt,
      ]);
      return { verification: next, eventId: event.deliveryStatus === 'pending' ? event.id : null };
    });
    if (eventId) this.dispatcher.dispatch([eventId]);
    return toVerificationResponse(verification);
  }

  async getForAccount(accountId: string, id: string): Promise<VerificationDetailResponseDto> {
    return onReplica(this.dataSource, async (manager) => {
      const verification = await manager.getRepository(Verification).findOneBy({ id, accountId });
      if (!verification) throw ApiError.notFound('verification');
      const history = await manager.getRepository(VerificationStatusHistory).find({ where: { verificationId: id }, order: { version: 'ASC' } });
      return toVerificationDetail(verification, history);
    });
  }
}
