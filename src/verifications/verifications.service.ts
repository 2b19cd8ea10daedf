import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { webhookUrlOf } from 'src/accounts/account-sql';
import { AccountsService } from 'src/accounts/accounts.service';
import { ApiError } from 'src/common/api-error';
import { SqlParams } from 'src/common/sql-params';
import { onPrimary, onReplica } from 'src/database/read-replica';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import { VERIFICATION_COLUMNS, Verification } from 'src/verifications/verification.entity';
import { VERIFICATION_DETAIL_SQL } from 'src/verifications/verification-json.sql';
import type { VerificationResponseDto } from 'src/verifications/verification-response.dto';
import { toVerificationResponse } from 'src/verifications/verification.mapper';
import { applyTransition, checkTransition, mergeApplicant } from 'src/verifications/verification-transition';
import type { CreateVerificationDto, TransitionVerificationDto } from 'src/verifications/verifications.dto';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import type { WebhookEvent } from 'src/webhooks/webhook-event.entity';
import { buildOutboxEvent, insertOutboxEventFrom, outboxJobSource } from 'src/webhooks/outbox-event';

// The row, locked for the change, with its account's webhook URL for the event.
const LOCK_SQL = `
  SELECT ${VERIFICATION_COLUMNS}, ${webhookUrlOf('verifications.account_id')} AS "webhookUrl"
    FROM verifications WHERE id = $1 FOR UPDATE`;

type LockedVerification = Verification & { webhookUrl: string | null };

interface DetailRow {
  version: number;
  json: string;
}

@Injectable()
export class VerificationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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
   * One transaction: lock the row, check the move (nothing changes unless every check passes), then
   * write the change, its history entry and its webhook event in one statement. The event is
   * queued only after the commit (a dead one too: the dashboard lists it as failed).
   */
  async transition(id: string, dto: TransitionVerificationDto): Promise<VerificationResponseDto> {
    const { verification, event } = await this.dataSource.transaction(async (manager) => {
      const { webhookUrl, ...current } = await this.lock(manager, id);
      checkTransition(current, dto);
      const next = applyTransition(current, dto, new Date());
      const change = {
        accountId: next.accountId,
        verificationId: id,
        previousStatus: current.status,
        verification: toVerificationResponse(next),
      };
      const built = buildOutboxEvent(change, webhookUrl, next.updatedAt);
      await this.write(manager, next, built);
      return { verification: next, event: outboxJobSource(change, built, webhookUrl) };
    });
    this.dispatcher.dispatch([event]);
    return toVerificationResponse(verification);
  }

  private async lock(manager: EntityManager, id: string): Promise<LockedVerification> {
    const [row] = (await manager.query(LOCK_SQL, [id])) as LockedVerification[];
    if (!row) throw ApiError.notFound('verification');
    return row;
  }

  /** The update, its history entry and its event in one round trip, inside the lock's transaction. */
  private async write(manager: EntityManager, next: Verification, event: WebhookEvent): Promise<void> {
    const params = new SqlParams();
    const p = (value: unknown) => params.add(value);
    const json = (value: object | null) => (value === null ? null : JSON.stringify(value));
    const at = p(next.updatedAt);
    await manager.query(
      `WITH updated AS (
         UPDATE verifications
            SET status = ${p(next.status)}, version = ${p(next.version)}, updated_at = ${at}, submitted_at = ${p(next.submittedAt)},
                decided_at = ${p(next.decidedAt)}, rejection_reasons = ${p(next.rejectionReasons)}::text[],
                applicant = ${p(json(next.applicant))}::jsonb, document = ${p(json(next.document))}::jsonb
          WHERE id = ${p(next.id)}
         RETURNING id, version, status, updated_at),
       history AS (
         INSERT INTO verification_status_history (verification_id, version, status, at)
         SELECT id, version, status, updated_at FROM updated)
       ${insertOutboxEventFrom('updated', event, params)}`,
      params.values,
    );
  }

  /**
   * The detail's JSON text, written by PostgreSQL in one statement (verification-json.sql.ts). Read on
   * a replica; with `minVersion` (read-your-writes), a replica that has not yet applied that version
   * (or the verification at all) is passed over for the primary.
   */
  async getForAccount(accountId: string, id: string, minVersion?: number): Promise<string> {
    const read = async (manager: EntityManager): Promise<DetailRow | null> => {
      const [row] = (await manager.query(VERIFICATION_DETAIL_SQL, [id, accountId])) as DetailRow[];
      return row ?? null;
    };
    let found = await onReplica(this.dataSource, read);
    if (minVersion !== undefined && (found === null || found.version < minVersion)) {
      found = await onPrimary(this.dataSource, read);
    }
    if (!found) throw ApiError.notFound('verification');
    return found.json;
  }
}
