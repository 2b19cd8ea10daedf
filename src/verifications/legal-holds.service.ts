import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { auditEntryCommitted } from 'src/audit/audit-event.repository';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { currentSource } from 'src/audit/audit-request';
import { ApiError } from 'src/common/api-error';
import { iso } from 'src/common/time';
import { parseTimestamp } from 'src/common/timestamps';
import { CommitSettler } from 'src/database/commit-settler';
import { type LegalHold, LegalHoldRepository } from 'src/verifications/legal-hold.repository';
import type { LegalHoldResponseDto, PutLegalHoldDto } from 'src/verifications/legal-hold.dto';
import { VerificationRepository } from 'src/verifications/verification.repository';

/** The one writer of a hold's JSON. */
export function toLegalHoldResponse(hold: LegalHold): LegalHoldResponseDto {
  return {
    object: 'legal_hold',
    verification_id: hold.verificationId,
    reason: hold.reason,
    case_reference: hold.caseReference,
    until: iso(hold.until),
    placed_at: iso(hold.placedAt),
    placed_by: hold.placedBy,
  };
}

/**
 * Legal holds on verifications (compliance, admin). Each change locks the verification row first,
 * so it serializes with a redaction of it (the redact route and retention lock it too) and is
 * recorded in the trail in its transaction; a lost commit answer is settled by looking for that entry.
 */
@Injectable()
export class LegalHoldsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly holds: LegalHoldRepository,
    private readonly verifications: VerificationRepository,
    private readonly trail: AuditTrail,
    private readonly settler: CommitSettler,
  ) {}

  async place(verificationId: string, dto: PutLegalHoldDto): Promise<LegalHoldResponseDto> {
    const until = dto.until === undefined || dto.until === null ? null : parseTimestamp('until', dto.until);
    if (until && until.getTime() <= Date.now()) throw ApiError.validation('until', 'must be in the future');
    const { actor } = currentSource();
    const hold: LegalHold = {
      verificationId,
      reason: dto.reason,
      caseReference: dto.case_reference ?? null,
      until,
      placedAt: new Date(),
      placedBy: { type: actor.type, id: actor.id, name: actor.name },
    };
    const entryId = uuidv7();
    await this.settler.transaction(
      async (manager) => {
        const accountId = await this.lockVerification(manager, verificationId);
        await this.holds.put(manager, hold);
        const changes = ['reason', 'case_reference', 'until'];
        const target = { type: 'verification', id: verificationId };
        const entry = { id: entryId, action: 'verification.legal_hold_placed', target, accountId, changes };
        await this.trail.record(manager, entry);
      },
      () => auditEntryCommitted(entryId),
    );
    return toLegalHoldResponse(hold);
  }

  async get(verificationId: string): Promise<LegalHoldResponseDto> {
    const hold = await this.holds.find(verificationId);
    if (hold) return toLegalHoldResponse(hold);
    await this.dataSource.transaction((manager) => this.lockVerification(manager, verificationId));
    throw ApiError.notFound('legal hold');
  }

  /** Releases the hold; a verification without one answers the same and records nothing (nothing changed). */
  async release(verificationId: string): Promise<void> {
    const entryId = uuidv7();
    await this.settler.transaction(
      async (manager) => {
        const accountId = await this.lockVerification(manager, verificationId);
        if (!(await this.holds.remove(manager, verificationId))) return false;
        const target = { type: 'verification', id: verificationId };
        const changes = ['legal_hold'];
        const entry = { id: entryId, action: 'verification.legal_hold_released', target, accountId, changes };
        await this.trail.record(manager, entry);
        return true;
      },
      // With no hold to release the transaction wrote nothing: the answer is the same either way.
      (removed) => (removed ? auditEntryCommitted(entryId) : async () => true),
    );
  }

  /** The verification's account, its row locked until the transaction ends; 404 when there is none. */
  private async lockVerification(manager: EntityManager, id: string): Promise<string> {
    const row = await this.verifications.lockById(manager, null, id, () => 'true AS "locked"');
    if (!row) throw ApiError.notFound('verification');
    return row.accountId;
  }
}
