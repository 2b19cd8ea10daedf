import type { CommitProbe } from 'src/database/in-doubt';
import { type DataSource, type EntityManager, IsNull, MoreThan } from 'typeorm';
import { AccountSecret } from 'src/accounts/account-secret.entity';

/** A secret authenticates and signs until its expiry: none, or still ahead. */
function activeSecretCondition(alias: string): string {
  return `(${alias}.expires_at IS NULL OR ${alias}.expires_at > now())`;
}

/** The key id a stored ciphertext records (`v1` for one stored before key ids were recorded). */
const SEALER_SQL = `CASE WHEN secret_ciphertext LIKE 'v2.%' THEN split_part(secret_ciphertext, '.', 2) ELSE 'v1' END`;

/** The stored secrets one key sealed: how many, and one of them to try the key on. */
export interface SealerSample {
  sealer: string;
  secrets: number;
  sample: string;
}

export interface StoredCiphertext {
  id: string;
  ciphertext: string;
}

/** The account a secret's hash belongs to, and how long the secret has left (null: no expiry). */
export interface ActiveSecretOwner {
  accountId: string;
  remainingMs: number | null;
}

/**
 * Ciphertexts of the account's active secrets, newest first, as a text[], over `accountId`: the SQL
 * expression of an account id in the caller's statement.
 */
export function activeSecretCiphertextsOf(accountId: string): string {
  return `ARRAY(SELECT s.secret_ciphertext FROM account_secrets s
                 WHERE s.account_id = ${accountId} AND ${activeSecretCondition('s')}
                 ORDER BY s.created_at DESC)`;
}

/** Whether the secret row `id` is committed (its rotation's answer was lost). */
export function secretCommitted(id: string): CommitProbe {
  return async (query) => (await query('SELECT 1 FROM account_secrets WHERE id = $1', [id])).length > 0;
}

/**
 * Every statement on `account_secrets`, and the rule "which secrets are active", once: writes take
 * the caller's transaction; `activeCiphertextsOf` is the fragment the delivery worker composes (`activeSecretCiphertextsOf`).
 */
export class AccountSecretRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, secret: AccountSecret): Promise<void> {
    await manager.getRepository(AccountSecret).insert(secret);
  }

  /** Secrets of the account still in an earlier grace period stop at `now`. */
  async endGracePeriods(manager: EntityManager, accountId: string, now: Date): Promise<void> {
    await manager.getRepository(AccountSecret).update({ accountId, expiresAt: MoreThan(now) }, { expiresAt: now });
  }

  /** The account's current secret (no expiry) expires at `expiresAt`; false when it had none. */
  async startGracePeriod(manager: EntityManager, accountId: string, expiresAt: Date): Promise<boolean> {
    const result = await manager.getRepository(AccountSecret).update({ accountId, expiresAt: IsNull() }, { expiresAt });
    return Boolean(result.affected);
  }

  /** The owner of the active secret with this SHA-256 hash; undefined when none is active. */
  async findActiveByHash(hash: Buffer): Promise<ActiveSecretOwner | undefined> {
    const rows: ActiveSecretOwner[] = await this.dataSource.query(
      `SELECT s.account_id AS "accountId", (EXTRACT(EPOCH FROM s.expires_at - now()) * 1000)::float8 AS "remainingMs"
         FROM account_secrets s WHERE s.secret_hash = $1 AND ${activeSecretCondition('s')}`,
      [hash],
    );
    return rows[0];
  }

  /** Per sealing key id, the number of secrets it sealed and one of them. */
  async sealers(): Promise<SealerSample[]> {
    return this.dataSource.query(
      `SELECT ${SEALER_SQL} AS sealer, count(*)::int AS secrets, min(secret_ciphertext) AS sample
         FROM account_secrets GROUP BY 1 ORDER BY 1`,
    );
  }

  /** Up to `limit` secrets not sealed by key `keyId`, in id order after `afterId`. */
  async sealedByOtherThan(keyId: string, afterId: string | null, limit: number): Promise<StoredCiphertext[]> {
    return this.dataSource.query(
      `SELECT id, secret_ciphertext AS ciphertext FROM account_secrets
        WHERE ${SEALER_SQL} <> $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [keyId, afterId, limit],
    );
  }

  /**
   * Replaces each ciphertext in one statement, only where it is still the one read (a secret
   * rotated meanwhile keeps its newer row). Returns how many were replaced.
   */
  async replaceCiphertexts(changes: Array<StoredCiphertext & { previous: string }>): Promise<number> {
    if (changes.length === 0) return 0;
    const rows: Array<{ replaced: number }> = await this.dataSource.query(
      `WITH replaced AS (
         UPDATE account_secrets s SET secret_ciphertext = c.ciphertext
           FROM unnest($1::uuid[], $2::text[], $3::text[]) AS c(id, ciphertext, previous)
          WHERE s.id = c.id AND s.secret_ciphertext = c.previous
         RETURNING 1)
       SELECT count(*)::int AS replaced FROM replaced`,
      [changes.map((c) => c.id), changes.map((c) => c.ciphertext), changes.map((c) => c.previous)],
    );
    return rows[0].replaced;
  }
}
