import { type DataSource, type EntityManager, IsNull, MoreThan } from 'typeorm';
import { AccountSecret } from 'src/accounts/account-secret.entity';

/** A secret authenticates and signs until its expiry: none, or still ahead. */
function activeSecretCondition(alias: string): string {
  return `(${alias}.expires_at IS NULL OR ${alias}.expires_at > now())`;
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
}
