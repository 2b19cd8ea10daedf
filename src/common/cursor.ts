import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { isUuid } from 'src/common/uuid';

/** The position a page ended at: the sort column's value (ISO ms timestamp) and the id tie-breaker. */
export interface CursorPosition {
  value: string;
  id: string;
}

export class InvalidCursorError extends Error {}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A stable fingerprint of everything a cursor is bound to (caller, filters, sort). */
export function cursorScope(parts: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(parts)
      .sort()
      .map((key) => [key, parts[key] ?? null]),
  );
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

/**
 * Opaque, signed keyset cursors. A cursor only decodes under the scope it was made for, so a cursor
 * reused with other filters, another sort or by another caller is refused rather than misread.
 */
export class CursorCodec {
  /** Signing keys derived from SECRET_ENCRYPTION_KEY's keys: the first signs, every one verifies. */
  private readonly keys: Buffer[];

  /** `secrets` newest first, so a page walk started before a key rotation goes on after it. */
  constructor(secrets: Buffer | readonly Buffer[]) {
    this.keys = (Buffer.isBuffer(secrets) ? [secrets] : secrets).map((secret) =>
      Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'kyc-cursor-v1', 32)),
    );
  }

  encode(scope: string, position: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify([position.value, position.id])).toString('base64url');
    return `${payload}.${this.sign(this.keys[0], scope, payload)}`;
  }

  decode(scope: string, cursor: string): CursorPosition {
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) throw new InvalidCursorError('malformed');
    const given = Buffer.from(signature);
    const signedByOne = this.keys.some((key) => {
      const expected = Buffer.from(this.sign(key, scope, payload));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
    if (!signedByOne) throw new InvalidCursorError('signature or scope mismatch');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw new InvalidCursorError('malformed');
    }
    if (
      !Array.isArray(parsed) ||
      parsed.length !== 2 ||
      typeof parsed[0] !== 'string' ||
      typeof parsed[1] !== 'string' ||
      !ISO_MS.test(parsed[0]) ||
      !isUuid(parsed[1]) ||
      parsed[1] !== parsed[1].toLowerCase()
    ) {
      throw new InvalidCursorError('malformed');
    }
    return { value: parsed[0], id: parsed[1] };
  }

  private sign(key: Buffer, scope: string, payload: string): string {
    return createHmac('sha256', key).update(`${scope}.${payload}`).digest('base64url').slice(0, 32);
  }
}
