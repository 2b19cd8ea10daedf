/**
 * Who made a request, as the audit trail records it (contract: "Operators: identity, roles and the
 * audit trail"). The credential guard sets it on every request that carries a valid credential.
 */
export type ActorType = 'operator' | 'client' | 'break_glass' | 'system';

/** How the actor proved who they are. */
export type ActorVia = 'oidc' | 'operator_key' | 'admin_token' | 'webhook_secret' | 'service';

export const ROLES = ['viewer', 'operator', 'compliance', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Actor {
  readonly type: ActorType;
  /** The OIDC `sub`, the operator key's id, or the client's account id; null for break-glass and system. */
  readonly id: string | null;
  /** The operator's name (email, else preferred_username, else sub); null for every other actor type. */
  readonly name: string | null;
  readonly via: ActorVia;
  /** The operator's roles; break-glass has every role; clients and the system have none. */
  readonly roles: readonly Role[];
}

export const BREAK_GLASS: Actor = { type: 'break_glass', id: null, name: null, via: 'admin_token', roles: ROLES };

export const SYSTEM: Actor = { type: 'system', id: null, name: null, via: 'service', roles: [] };

export function clientActor(accountId: string): Actor {
  return { type: 'client', id: accountId, name: null, via: 'webhook_secret', roles: [] };
}
