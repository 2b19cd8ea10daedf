import { createCipheriv, randomBytes } from 'node:crypto';
import {
  SecretKeyError,
  SecretKeyring,
  generateWebhookSecret,
  keyIdOf,
  hashSecret,
  looksLikeWebhookSecret,
} from 'src/accounts/secret-crypto';

describe('webhook secrets', () => {
  it('are whsec_ + base64 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(looksLikeWebhookSecret(secret)).toBe(true);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it.each(['', 'whsec_', 'whsec_short', 'Bearer whsec_x', `whsec_${'A'.repeat(44)}`, `WHSEC_${'A'.repeat(43)}=`])(
    'rejects %p as a secret shape',
    (value) => {
      expect(looksLikeWebhookSecret(value)).toBe(false);
    },
  );

  it('hash is SHA-256, deterministic and distinct per secret', () => {
    const secret = generateWebhookSecret();
    expect(hashSecret(secret)).toHaveLength(32);
    expect(hashSecret(secret).equals(hashSecret(secret))).toBe(true);
    expect(hashSecret(secret).equals(hashSecret(generateWebhookSecret()))).toBe(false);
  });

  it('sealing round-trips, records the sealing key and never stores the plaintext', () => {
    const key = randomBytes(32);
    const keyring = new SecretKeyring([key]);
    const secret = generateWebhookSecret();
    const stored = keyring.seal(secret);
    expect(stored).toMatch(/^v2\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(SecretKeyring.sealerOf(stored)).toBe(keyIdOf(key));
    expect(stored).not.toContain(secret.slice(6, 20));
    expect(stored).not.toContain(key.toString('base64url').slice(0, 11));
    expect(keyring.open(stored)).toBe(secret);
  });

  it('uses a fresh IV each time', () => {
    const keyring = new SecretKeyring([randomBytes(32)]);
    const secret = generateWebhookSecret();
    expect(keyring.seal(secret)).not.toBe(keyring.seal(secret));
  });

  it('during a rotation seals under the first key and opens under every key', () => {
    const [older, newer] = [randomBytes(32), randomBytes(32)];
    const secret = generateWebhookSecret();
    const sealedBefore = new SecretKeyring([older]).seal(secret);
    const rotating = new SecretKeyring([newer, older]);
    expect(rotating.open(sealedBefore)).toBe(secret);
    expect(SecretKeyring.sealerOf(rotating.seal(secret))).toBe(keyIdOf(newer));
    expect(rotating.currentId).toBe(keyIdOf(newer));
  });

  it('opens a v1 secret (stored before keys were recorded) under whichever key authenticates it', () => {
    const [older, newer] = [randomBytes(32), randomBytes(32)];
    const secret = generateWebhookSecret();
    const legacy = sealV1(older, secret);
    expect(SecretKeyring.sealerOf(legacy)).toBe('v1');
    expect(new SecretKeyring([newer, older]).open(legacy)).toBe(secret);
    expect(() => new SecretKeyring([newer]).open(legacy)).toThrow(SecretKeyError);
  });

  it('names SECRET_ENCRYPTION_KEY and the missing key id, never a key, when it cannot open a secret', () => {
    const key = randomBytes(32);
    const stored = new SecretKeyring([key]).seal(generateWebhookSecret());
    const other = randomBytes(32);
    const error = captured(() => new SecretKeyring([other]).open(stored));
    expect(error).toBeInstanceOf(SecretKeyError);
    expect(error.message).toBe(`SECRET_ENCRYPTION_KEY does not hold key ${keyIdOf(key)}, which sealed this secret`);
    expect(error.message).not.toContain(key.toString('base64'));
    expect(error.message).not.toContain(other.toString('base64'));
  });

  it('fails on a tampered ciphertext or an unknown format', () => {
    const keyring = new SecretKeyring([randomBytes(32)]);
    const [version, id, iv, tag, ciphertext] = keyring.seal(generateWebhookSecret()).split('.');
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] ^= 1;
    expect(() => keyring.open([version, id, iv, tag, flipped.toString('base64url')].join('.'))).toThrow(
      /does not decrypt this secret/,
    );
    expect(() => keyring.open(['v3', id, iv, tag, ciphertext].join('.'))).toThrow('unrecognised format');
    expect(() => keyring.open('garbage')).toThrow(SecretKeyError);
  });
});

/** The stored form before key rotation: `v1.<iv>.<tag>.<ciphertext>`, still in databases. */
function sealV1(key: Buffer, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

function captured(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}
