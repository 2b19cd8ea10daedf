import { LARGE_ACCOUNTS, MEDIUM_ACCOUNTS, benchSecret } from './bench-env';

/** What the list benchmarks request: the route, then one path and Bearer secret per request. */
export const LIST_PATH = '/api/v1/public/kyc/verifications';
/** Name, surname, e-mail and external-id fragments, from rare (one surname) to common (a domain). */
const Q_FRAGMENTS = ['garc', 'lovelace', 'ann', 'user-42', 'tanaka', 'example.de', 'okafor', 'sofia'];

export interface Variant {
  path: string;
  secret: string;
}

/** The accounts with enough rows for a page after 200 hops: every scenario uses the same ones. */
export const ACCOUNTS = Array.from({ length: LARGE_ACCOUNTS + MEDIUM_ACCOUNTS }, (_, i) => i);

export function perAccount(query: string): Variant[] {
  return ACCOUNTS.map((account) => ({ path: `${LIST_PATH}?${query}`, secret: benchSecret(account) }));
}

export function qVariants(): Variant[] {
  // Every account with every fragment, interleaved so consecutive requests differ in both.
  return ACCOUNTS.flatMap((account, i) =>
    Q_FRAGMENTS.map((_, j) => ({
      path: `${LIST_PATH}?q=${encodeURIComponent(Q_FRAGMENTS[(i + j) % Q_FRAGMENTS.length] as string)}`,
      secret: benchSecret(account),
    })),
  );
}
