import type { Request } from 'express';
import type { AccountsService } from 'src/accounts/accounts.service';
import { bearerToken } from 'src/auth/bearer';

const resolved = new WeakMap<Request, Promise<string | null>>();

/**
 * The account a public-API request authenticates as (null for any bad credential). Memoised per
 * request, so the rate limiter and the credential guard share one look-up.
 */
export function clientAccountId(req: Request, accounts: AccountsService): Promise<string | null> {
  let pending = resolved.get(req);
  if (!pending) {
    const token = bearerToken(req);
    pending = token ? accounts.accountIdForSecret(token) : Promise.resolve(null);
    resolved.set(req, pending);
  }
  return pending;
}
