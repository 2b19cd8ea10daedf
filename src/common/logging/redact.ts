export const REDACTED = '[REDACTED]';

/** Keys whose values are never written, whatever they look like. */
const SECRET_KEY =
  /^(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key|password|passwd|secret|token|api_key|apikey|access_token|refresh_token|client_secret|webhook_secret|secret_encryption_key|admin_token|internal_api_token)$|secret|token|password/i;

/** 42 base64 characters and a 43rd whose low two bits are zero: exactly 32 bytes, either alphabet. */
const KEY_BODY = '[A-Za-z0-9+/_-]{42}[AEIMQUYcgkosw048]';

/** Values that look like credentials wherever they appear inside a string. */
const SECRET_SHAPES: readonly RegExp[] = [
  /whsec_[A-Za-z0-9+/=_-]*/g,
  /\b(Bearer|Basic)\s+[^\s",;]+/gi,
  // A bare webhook key or SECRET_ENCRYPTION_KEY, padded as we print it.
  new RegExp(`${KEY_BODY}=`, 'g'),
  // URL-safe and unpadded: only standing alone and mixing digits and both cases, so identifiers stay.
  /(?<![\w-])(?=[\w-]{0,42}\d)(?=[\w-]{0,42}[A-Z])(?=[\w-]{0,42}[a-z])[\w-]{42}[AEIMQUYcgkosw048](?![\w+/=-])/g,
];

/** What ends a run of URL text: quotes, backslashes, angle brackets and spaces (kept by the split). */
const RUN_DELIMITERS = /([\s"'\\<>]+)/;
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;
const ESCAPE = /%[0-9A-Fa-f]{2}/;
/** Enough rounds for a double- or triple-encoded secret. */
const DECODE_ROUNDS = 4;

const MAX_DEPTH = 8;

/**
 * Removes credentials from anything about to be logged: values under secret-named keys, secret-shaped
 * substrings (`whsec_…`, `Bearer …`) and the configured tokens themselves, wherever they appear.
 */
export class Redactor {
  private readonly literals: string[];

  constructor(literals: readonly string[] = []) {
    // Short literals would redact ordinary words; a token that short is documented as weak.
    this.literals = literals.filter((literal) => literal.length >= 8);
  }

  text(value: string): string {
    // Decoded first: a shape match stops at the first `%`, leaving the rest of an encoded secret.
    // A split, not one regular expression over the whole text: linear on attacker-sized URLs.
    if (!value.includes('%')) return this.plain(value);
    const parts = value.split(RUN_DELIMITERS);
    return this.plain(parts.map((part, i) => (i % 2 === 0 && ESCAPE.test(part) ? this.encoded(part) : part)).join(''));
  }

  /** Text cut to `max` characters after redaction, so a cut never splits a secret out of view. */
  clipped(value: string, max: number): string {
    const text = this.text(value);
    return text.length > max ? `${text.slice(0, max)}…` : text;
  }

  private encoded(run: string): string {
    let decoded = run;
    for (let round = 0; round < DECODE_ROUNDS && ESCAPE.test(decoded); round++) decoded = decodeEscapes(decoded);
    const redacted = this.plain(decoded);
    if (redacted === decoded) return run;
    // Written back escaped, so a decoded quote or newline cannot break the line it sits in.
    return redacted.replace(/[^A-Za-z0-9\-._~!$&()*+,;=:@/?[\]]/g, (char) => encodeURIComponent(char));
  }

  private plain(value: string): string {
    let result = value;
    for (const literal of this.literals) {
      if (result.includes(literal)) result = result.split(literal).join(REDACTED);
    }
    for (const shape of SECRET_SHAPES) {
      result = result.replace(shape, (match: string, scheme?: string) =>
        typeof scheme === 'string' && !match.startsWith('whsec_') ? `${scheme} ${REDACTED}` : REDACTED,
      );
    }
    return result;
  }

  value(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
    if (typeof value === 'string') return this.text(value);
    if (value === null || typeof value !== 'object') return value;
    if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;
    if (value instanceof Error) return this.error(value, depth, seen);
    const prototype: unknown = Object.getPrototypeOf(value);
    // Class instances (requests, sockets) are left to pino's serializers and the line-level scrub.
    if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return value;
    if (seen.has(value) || depth >= MAX_DEPTH) return '[Object]';
    seen.add(value);
    if (Array.isArray(value)) return value.map((item) => this.value(item, depth + 1, seen));
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      result[key] =
        SECRET_KEY.test(key) && item !== null && item !== undefined && typeof item !== 'boolean'
          ? REDACTED
          : this.value(item, depth + 1, seen);
    }
    return result;
  }

  private error(error: Error, depth: number, seen: WeakSet<object>): Record<string, unknown> {
    const result: Record<string, unknown> = { type: error.name, message: this.text(error.message) };
    if (error.stack) result.stack = this.text(error.stack);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') result.code = code;
    if (error.cause !== undefined) result.cause = this.value(error.cause, depth + 1, seen);
    return result;
  }
}

/** decodeURIComponent per run of escapes; a malformed UTF-8 run is read byte by byte instead of throwing. */
function decodeEscapes(text: string): string {
  return text.replace(ESCAPES, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return Buffer.from(escapes.replaceAll('%', ''), 'hex').toString('latin1');
    }
  });
}
