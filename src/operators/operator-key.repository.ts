import type { DataSource, EntityManager } from 'typeorm';
import type { Role } from 'src/http/actor';

/** An operator key as stored, without its hash. */
export interface OperatorKeyRecord {
  id: string;
  name: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = `id, name, role, created_at AS "createdAt", expires_at AS "expiresAt",
  last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;

/** last_used_at is written at most this often per key, so a script's every request is not a write. */
export const LAST_USED_RESOLUTION_S = 60;

/** Every statement on `operator_keys`. Reads go to the primary: a revocation must be seen at once. */
export class OperatorKeyRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, key: OperatorKeyRecord, keyHash: string): Promise<void> {
    await manager.query(
      `INSERT INTO operator_keys (id, name, role, key_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [key.id, key.name, key.role, keyHash, key.createdAt, key.expiresAt],
    );
  }

  /** Every key, newest first (revoked and expired ones included: they are the record of who had access). */
  list(): Promise<OperatorKeyRecord[]> {
    return this.dataSource.query(`SELECT ${COLUMNS} FROM operator_keys ORDER BY created_at DESC, id DESC`);
  }

  /** Revokes the key (a revoked one keeps its first revocation time): 'revoked', 'already' when it was
   * revoked before, null when there is no such key. */
  async revoke(manager: EntityManager, id: string, at: Date): Promise<'revoked' | 'already' | null> {
    const rows: { before: Date | null }[] = await manager.query(
      `WITH old AS (SELECT id, revoked_at AS before FROM operator_keys WHERE id = $1 FOR UPDATE),
            revoked AS (UPDATE operator_keys k SET revoked_at = coalesce(k.revoked_at, $2)
                          FROM old WHERE k.id = old.id RETURNING old.before)
       SELECT before FROM revoked`,
      [id, at],
    );
    if (rows.length === 0) return null;
    return rows[0].before === null ? 'revoked' : 'already';
  }

  /** The key with this hash while it is usable (not revoked, not expired by the database's clock). */
  async findUsable(keyHash: string): Promise<OperatorKeyRecord | null> {
    const rows: OperatorKeyRecord[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM operator_keys WHERE key_hash = $1 AND revoked_at IS NULL AND expires_at > now()`,
      [keyHash],
    );
    return rows[0] ?? null;
  }

  /** Records a use, unless one was recorded within LAST_USED_RESOLUTION_S. */
  async touch(id: string, at: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE operator_keys SET last_used_at = $2
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - make_interval(secs => $3))`,
      [id, at, LAST_USED_RESOLUTION_S],
    );
  }
}
