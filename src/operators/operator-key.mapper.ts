import { iso } from 'src/common/time';
import type { OperatorKeyRecord } from 'src/operators/operator-key.repository';
import type { OperatorKeyResponseDto } from 'src/operators/operator-keys.dto';

/** The contract's JSON of an operator key, without the key itself (shown only by its creation). */
export function toOperatorKeyResponse(key: OperatorKeyRecord): OperatorKeyResponseDto {
  return {
    id: key.id,
    object: 'operator_key',
    name: key.name,
    role: key.role,
    created_at: iso(key.createdAt),
    expires_at: iso(key.expiresAt),
    last_used_at: iso(key.lastUsedAt),
    revoked_at: iso(key.revokedAt),
  };
}
