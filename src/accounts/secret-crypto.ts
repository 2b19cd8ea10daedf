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

/** AES-256-GCM; the stored form is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function encryptSecret(key: Buffer, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

export function decryptSecret(key: Buffer, stored: string): string {
  const [version, iv, tag, ciphertext] = stored.split('.');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined)
    throw new Error('Unrecognised secret ciphertext format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * decryptSecret with a bounded memory (emptied when full): a ciphertext always decrypts to the same
 * secret, and a delivery worker signs with the same few secrets again and again.
 */
export function cachedDecryptor(key: Buffer, size = 10_000): (stored: string) => string {
  const known = new Map<string, string>();
  return (stored) => {
    let secret = known.get(stored);
    if (secret === undefined) {
      if (known.size >= size) known.clear();
      secret = decryptSecret(key, stored);
      known.set(stored, secret);
    }
    return secret;
  };
}
