import { Injectable, Logger } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { auditEntryCommitted } from 'src/audit/audit-event.repository';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { ApiError } from 'src/common/api-error';
import { CommitSettler } from 'src/database/commit-settler';
import type { Actor, Role } from 'src/http/actor';
import {
  DEFAULT_EXPIRES_IN_DAYS,
  expiryOf,
  hasOperatorKeyShape,
  newOperatorKey,
  operatorKeyHash,
} from 'src/operators/operator-key';
import { OperatorKeyRepository, type OperatorKeyRecord } from 'src/operators/operator-key.repository';

/**
 * Operator keys: issued with a name, one role and an expiry, shown once, stored hashed. A key is
 * looked up by its hash on every request, on the primary, with no cache: a revoked or expired key is
 * refused by every process from the moment the revocation commits (well within the contract's 2 s),
 * at the cost of one indexed read per admin request, a rate at which that is nothing. An issue and a
 * revocation are recorded in the audit trail in their own transaction; a lost commit answer is
 * settled by looking for that entry.
 */
@Injectable()
export class OperatorKeysService {
  private readonly logger = new Logger(OperatorKeysService.name);

  constructor(
    private readonly keys: OperatorKeyRepository,
    private readonly trail: AuditTrail,
    private readonly settler: CommitSettler,
  ) {}

  async create(
    name: string,
    role: Role,
    expiresInDays = DEFAULT_EXPIRES_IN_DAYS,
  ): Promise<{ record: OperatorKeyRecord; key: string }> {
    const key = newOperatorKey();
    const createdAt = new Date();
    const record: OperatorKeyRecord = {
      id: uuidv7(),
      name,
      role,
      createdAt,
      expiresAt: expiryOf(createdAt, expiresInDays),
      lastUsedAt: null,
      revokedAt: null,
    };
    const entryId = uuidv7();
    await this.settler.transaction(
      async (manager) => {
        await this.keys.insert(manager, record, operatorKeyHash(key));
        const target = { type: 'operator_key', id: record.id };
        const changes = ['name', 'role', 'expires_at'];
        await this.trail.record(manager, { id: entryId, action: 'operator_key.created', target, changes });
      },
      () => auditEntryCommitted(entryId),
    );
    return { record, key };
  }

  list(): Promise<OperatorKeyRecord[]> {
    return this.keys.list();
  }

  /** Revoking a revoked key changes nothing; an unknown id is 404. */
  async revoke(id: string): Promise<void> {
    const entryId = uuidv7();
    const revoked = await this.settler.transaction(
      async (manager) => {
        const outcome = await this.keys.revoke(manager, id, new Date());
        if (outcome === 'revoked') {
          const target = { type: 'operator_key', id };
          await this.trail.record(manager, {
            id: entryId,
            action: 'operator_key.revoked',
            target,
            changes: ['revoked_at'],
          });
        }
        return outcome;
      },
      // A key revoked before is revoked whatever became of this transaction, which wrote nothing.
      (outcome) =>
        outcome === 'revoked' ? auditEntryCommitted(entryId) : outcome === 'already' ? async () => true : null,
    );
    if (revoked === null) throw ApiError.notFound('operator key');
  }

  /** The operator a usable key proves, or null (unknown, revoked, expired, malformed: all alike). */
  async authenticate(token: string): Promise<Actor | null> {
    if (!hasOperatorKeyShape(token)) return null;
    const key = await this.keys.findUsable(operatorKeyHash(token));
    if (!key) return null;
    // A lost last_used_at write must not refuse a valid key (a read-only moment, a lock wait).
    await this.keys.touch(key.id, new Date()).catch((error: Error) => {
      this.logger.warn({ operatorKeyId: key.id, error: error.message }, 'operator key: last_used_at not recorded');
    });
    return { type: 'operator', id: key.id, name: key.name, via: 'operator_key', roles: [key.role] };
  }
}
