/** The first key of the advisory locks that keep one promotion of an account's waiting events at a time. */
const PROMOTION_LOCK = 7_277_004;

/**
 * The statement that takes the promotion locks of the accounts `$1` (text[]) in the caller's transaction
 * and returns those it holds as `locked`. Waiting, it takes every one, in one order (by key), so two
 * promotions of overlapping accounts never wait on each other in a cycle; `ifFree`, it takes those no
 * other transaction holds and passes over the rest, waiting for none.
 */
export function promotionLocks(ifFree: boolean): string {
  const keys = `(SELECT DISTINCT a, hashtext(a) AS k FROM unnest($1::text[]) AS a`;
  return ifFree
    ? `SELECT coalesce(array_agg(a), '{}') AS locked FROM ${keys}) s WHERE pg_try_advisory_xact_lock(${PROMOTION_LOCK}, k)`
    : `SELECT $1::text[] AS locked, count(pg_advisory_xact_lock(${PROMOTION_LOCK}, k)) FROM ${keys} ORDER BY k) s`;
}
