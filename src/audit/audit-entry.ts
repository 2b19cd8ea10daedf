import type { ActorType, ActorVia } from 'src/http/actor';

export const AUDIT_OUTCOMES = ['success', 'denied'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

export const ACTOR_TYPES = ['operator', 'client', 'break_glass', 'system'] as const satisfies readonly ActorType[];

/** What an entry is about: an account, a verification, a webhook event, a dashboard job, the trail. */
export interface AuditTarget {
  type: string;
  id: string;
}

/** An entry as it is stored, exported and hashed (the contract's `audit_event`). */
export interface AuditEventJson {
  id: string;
  object: 'audit_event';
  sequence: number;
  at: string;
  actor: { type: ActorType; id: string | null; name: string | null; via: ActorVia };
  action: string;
  outcome: AuditOutcome;
  target: AuditTarget | null;
  account_id: string | null;
  changes: string[];
  request_id: string | null;
  source_ip: string | null;
  previous_hash: string;
  hash: string;
}

/** The client's view of its own account's trail: operators unnamed, no address, no chain fields. */
export type ClientAuditEventJson = Omit<AuditEventJson, 'actor' | 'source_ip' | 'previous_hash' | 'hash'> & {
  actor: AuditEventJson['actor'] | { type: 'operator' };
};

/** A stored row, as the repository reads it. */
export interface AuditEventRow {
  sequence: string;
  id: string;
  at: Date;
  actor_type: ActorType;
  actor_id: string | null;
  actor_name: string | null;
  actor_via: ActorVia;
  action: string;
  outcome: AuditOutcome;
  target_type: string | null;
  target_id: string | null;
  account_id: string | null;
  changes: string[];
  request_id: string | null;
  source_ip: string | null;
  previous_hash: string;
  hash: string;
}

/** The one writer of an entry's JSON: the hash is computed over exactly this shape. */
export function toAuditEventJson(row: Omit<AuditEventRow, 'hash'> & { hash?: string }): AuditEventJson {
  return {
    id: row.id,
    object: 'audit_event',
    sequence: Number(row.sequence),
    at: row.at.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name, via: row.actor_via },
    action: row.action,
    outcome: row.outcome,
    target: row.target_type !== null && row.target_id !== null ? { type: row.target_type, id: row.target_id } : null,
    account_id: row.account_id,
    changes: [...row.changes],
    request_id: row.request_id,
    source_ip: row.source_ip,
    previous_hash: row.previous_hash,
    hash: row.hash ?? '',
  };
}

export function toClientAuditEventJson(entry: AuditEventJson): ClientAuditEventJson {
  const { actor, source_ip: _ip, previous_hash: _previous, hash: _hash, ...rest } = entry;
  return { ...rest, actor: actor.type === 'operator' ? { type: 'operator' } : actor };
}
