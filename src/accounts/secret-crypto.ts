import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{43}=$/;

export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

export function looksLikeWebhookSecret(value: string): boolean {
  return SECRET_SHAPE.test(value);
}

/** The look-up key stored beside the ciphertext; a Bearer credential is found by its hash. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Why a stored secret cannot be opened; names the variable, never a key or a secret. */
export class SecretKeyError extends Error {
  constructor(readonly reason: string) {
    super(`SECRET_ENCRYPTION_KEY ${reason}`);
    this.name = 'SecretKeyError';
  }
}

/** A short public name for a key (not reversible): what a stored secret records as its sealer. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('kyc-secret-key-id\0').update(key).digest('base64url').slice(0, 11);
}

const LEGACY_SEALER = 'v1';

/**
 * The keys of SECRET_ENCRYPTION_KEY, newest first: the first seals, every one opens what it sealed.
 * A secret is stored as `v2.<key id>.<iv>.<tag>.<ciphertext>` (AES-256-GCM, base64url parts), so the
 * key that sealed it is known; `v1.<iv>.<tag>.<ciphertext>` (before key rotation existed) records no
 * key and is opened by whichever key authenticates it.
 */
export class SecretKeyring {
  private readonly byId: Map<string, Buffer>;

  constructor(readonly keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('a keyring needs at least one key');
    this.byId = new Map(keys.map((key) => [keyIdOf(key), key]));
  }

  /** The key id new secrets are sealed under. */
  get currentId(): string {
    return keyIdOf(this.keys[0]);
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0], iv);
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [
      'v2',
      this.currentId,
      ...[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')),
    ].join('.');
  }

  open(stored: string): string {
    const parts = stored.split('.');
    if (parts[0] === 'v2' && parts.length === 5) {
      const key = this.byId.get(parts[1]);
      if (!key) throw new SecretKeyError(`does not hold key ${parts[1]}, which sealed this secret`);
      return openWith(key, parts.slice(2)) ?? failAuthentication(parts[1]);
    }
    if (parts[0] === 'v1' && parts.length === 4) {
      for (const key of this.keys) {
        const secret = openWith(key, parts.slice(1));
        if (secret !== undefined) return secret;
      }
      throw new SecretKeyError('holds no key that decrypts this secret (stored before keys were recorded)');
    }
    throw new SecretKeyError('cannot read this stored secret: unrecognised format');
  }

  /** The key id a stored secret records (`v1` for one that records none). */
  static sealerOf(stored: string): string {
    const [version, id] = stored.split('.');
    return version === 'v2' && id ? id : LEGACY_SEALER;
  }
}

function failAuthentication(id: string): never {
  throw new SecretKeyError(`key ${id} does not decrypt this secret (the key or the stored text was changed)`);
}

/** The secret, or undefined when the key does not authenticate it. */
function openWith(key: Buffer, [iv, tag, ciphertext]: string[]): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * SecretKeyring.open with a bounded memory (emptied when full): a ciphertext always decrypts to the
 * same secret, and a delivery worker signs with the same few secrets again and again.
 */
export function cachedDecryptor(keyring: SecretKeyring, size = 10_000): (stored: string) => string {
  const known = new Map<string, string>();
  return (stored) => {
    let secret = known.get(stored);
    if (secret === undefined) {
      if (known.size >= size) known.clear();
      secret = keyring.open(stored);
      known.set(stored, secret);
    }
    return secret;
  };
}
