import { ROLES, type Actor, type Role } from 'src/http/actor';

export type Claims = Readonly<Record<string, unknown>>;

/** The claim at a dot path (`realm_access.roles`), or undefined. */
export function claimAt(claims: Claims, path: readonly string[]): unknown {
  let value: unknown = claims;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** The roles the claim names: an array of strings or one space-separated string; unknown names are ignored. */
export function rolesFromClaims(claims: Claims, path: readonly string[]): Role[] {
  const value = claimAt(claims, path);
  const names = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : [];
  return ROLES.filter((role) => names.includes(role));
}

/** The operator a verified token names: `sub`, named by email, else preferred_username, else sub. */
export function operatorFromClaims(claims: Claims, rolesPath: readonly string[]): Actor | null {
  const sub = claims.sub;
  if (typeof sub !== 'string' || sub === '') return null;
  const text = (name: string): string | undefined => {
    const value = claims[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  return {
    type: 'operator',
    id: sub,
    name: text('email') ?? text('preferred_username') ?? sub,
    via: 'oidc',
    roles: rolesFromClaims(claims, rolesPath),
  };
}

/** `iat` in the future beyond the leeway (jose checks exp and nbf, and iat only against a maximum age). */
export function issuedInFuture(claims: Claims, nowSeconds: number, leewaySeconds: number): boolean {
  return typeof claims.iat === 'number' && claims.iat > nowSeconds + leewaySeconds;
}
