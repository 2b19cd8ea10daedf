import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Actor } from 'src/http/actor';
import { ROLES } from 'src/http/actor';
import type { LoginTransaction } from 'src/operators/oidc-login';

/** A dashboard session lasts this long, whatever the identity provider's tokens say (contract: at most 8 h). */
export const SESSION_TTL_MS = 8 * 3_600_000;
/** A login not finished within this long starts again. */
export const LOGIN_TTL_MS = 10 * 60_000;

type Kind = 'session' | 'login';

/**
 * The dashboard's login sessions and pending logins, in Redis under the queue prefix: every
 * process sees them, a logout ends a session everywhere at once (a signed cookie could not be
 * taken back), and the dashboard cannot work without Redis anyway. The browser holds only a random
 * id; Redis holds its SHA-256, so a copy of Redis opens no session.
 */
export class DashboardSessions {
  constructor(
    private readonly redis: Pick<Redis, 'set' | 'get' | 'getdel' | 'del'>,
    private readonly prefix: string,
  ) {}

  /** A new session for the operator; returns the cookie's value. */
  async open(actor: Actor): Promise<string> {
    const id = newId();
    const stored = { id: actor.id, name: actor.name, roles: actor.roles };
    await this.redis.set(this.key('session', id), JSON.stringify(stored), 'PX', SESSION_TTL_MS);
    return id;
  }

  /** The operator of a live session, or null. */
  async actorOf(cookie: string): Promise<Actor | null> {
    const raw = await this.redis.get(this.key('session', cookie));
    if (raw === null) return null;
    const stored = JSON.parse(raw) as { id: string; name: string; roles: string[] };
    const roles = ROLES.filter((role) => stored.roles.includes(role));
    return { type: 'operator', id: stored.id, name: stored.name, via: 'oidc', roles };
  }

  async close(cookie: string): Promise<void> {
    await this.redis.del(this.key('session', cookie));
  }

  /** Keeps a login's state, nonce and PKCE verifier until its callback; returns the cookie's value. */
  async beginLogin(transaction: LoginTransaction): Promise<string> {
    const id = newId();
    await this.redis.set(this.key('login', id), JSON.stringify(transaction), 'PX', LOGIN_TTL_MS);
    return id;
  }

  /** The pending login, taken once: a callback replayed finds nothing. */
  async takeLogin(cookie: string): Promise<LoginTransaction | null> {
    const raw = await this.redis.getdel(this.key('login', cookie));
    return raw === null ? null : (JSON.parse(raw) as LoginTransaction);
  }

  private key(kind: Kind, cookie: string): string {
    return `${this.prefix}:dashboard:${kind}:${createHash('sha256').update(cookie).digest('hex')}`;
  }
}

function newId(): string {
  return randomBytes(32).toString('base64url');
}
