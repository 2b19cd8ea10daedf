import { Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from 'typeorm';
import { AuditChainer, type ChainedBy } from 'src/audit/audit-chainer';
import { type AuditEntryDraft, AuditEventRepository, auditEntryCommitted } from 'src/audit/audit-event.repository';
import type { AuditOutcome, AuditTarget } from 'src/audit/audit-entry';
import { breakGlassUses } from 'src/audit/audit-metrics';
import { type AuditSource, currentSource, sourceOf } from 'src/audit/audit-request';
import { currentRequest } from 'src/common/logging/log-context';
import { CommitSettler } from 'src/database/commit-settler';
import type { Actor } from 'src/http/actor';

/** What a caller says about an entry; who, when and from where come from the request being served. */
export interface AuditEntryInput {
  action: string;
  target?: AuditTarget | null;
  accountId?: string | null;
  /** The names of the fields the change touched, never their values. */
  changes?: readonly string[];
  outcome?: AuditOutcome;
  /** Overrides the request's actor (the system's own actions run outside a request anyway). */
  actor?: Actor;
  /** The entry's id, chosen by a caller that must find the write again (auditEntryCommitted); new otherwise. */
  id?: string;
}

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The audit trail's recorder. `record` writes an entry in the caller's transaction, so an entry and
 * the change it records commit (or roll back) together; the other methods write entries that stand
 * alone (a read, a refusal), each in a transaction of its own.
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger('AuditTrail');

  constructor(
    private readonly entries: AuditEventRepository,
    private readonly chainer: AuditChainer,
    private readonly settler: CommitSettler,
  ) {}

  /**
   * Writes the entry in the caller's transaction. While serving a request it is staged, and chained
   * once that commits, before the answer leaves (AuditChainer); the service's own actions append to
   * the chain at once.
   */
  async record(manager: EntityManager, input: AuditEntryInput, source = currentSource()): Promise<void> {
    await this.recordMany(manager, [input], source);
  }

  /** Several entries in the caller's transaction, in order, in one statement (a retention batch). */
  async recordMany(manager: EntityManager, inputs: readonly AuditEntryInput[], source = currentSource()) {
    await this.write(manager, inputs, source, 'by the route');
  }

  /** An entry that records no change of its own (a read, an export, a refusal), chained before this returns. */
  async recordAlone(input: AuditEntryInput, source: AuditSource = currentSource()): Promise<void> {
    // Its own id, chosen here: a lost commit answer is settled by looking for the entry.
    const entry = { ...input, id: input.id ?? uuidv7() };
    await this.settler.transaction(
      (manager) => this.write(manager, [entry], source, 'here'),
      () => auditEntryCommitted(entry.id),
    );
    const request = currentRequest();
    await (request ? this.chainer.flushFor(request) : this.chainer.flushQuietly());
  }

  /**
   * A request refused 403 because the actor's roles lack the route's permission: `auth.denied`,
   * outcome denied. Call it where the refusal is decided, before throwing the 403.
   */
  async recordDenied(req: Request, accountId: string | null = null): Promise<void> {
    await this.recordAlone({ action: 'auth.denied', outcome: 'denied', accountId, changes: [] }, sourceOf(req));
  }

  /**
   * A request made with ADMIN_TOKEN: counted in kyc_break_glass_uses_total, and a read is recorded
   * as `admin.read` here (a change is recorded by the change itself, actor break_glass).
   */
  async breakGlassUsed(req: Request): Promise<void> {
    breakGlassUses.inc();
    if (!READ_METHODS.has(req.method)) return;
    await this.recordAlone({ action: 'admin.read', changes: [] }, sourceOf(req));
  }

  /** Appended to the chain at once outside a request; staged while serving one, chained `by` the route's interceptor or `here`. */
  private async write(manager: EntityManager, inputs: readonly AuditEntryInput[], source: AuditSource, by: ChainedBy) {
    const drafts = inputs.map((input) => draft(input, source));
    const request = currentRequest();
    if (!request) return this.entries.append(manager, drafts);
    await this.entries.stage(manager, drafts);
    this.chainer.staged(request, by);
  }
}

function draft(input: AuditEntryInput, source: AuditSource): AuditEntryDraft {
  const actor = input.actor ?? source.actor;
  const system = actor.type === 'system';
  return {
    ...(input.id ? { id: input.id } : {}),
    actor_type: actor.type,
    actor_id: actor.id,
    actor_name: actor.type === 'operator' ? actor.name : null,
    actor_via: actor.via,
    action: input.action,
    outcome: input.outcome ?? 'success',
    target_type: input.target?.type ?? null,
    target_id: input.target?.id ?? null,
    account_id: input.accountId ?? null,
    changes: [...(input.changes ?? [])],
    request_id: system ? null : source.requestId,
    source_ip: system ? null : source.sourceIp,
  };
}
