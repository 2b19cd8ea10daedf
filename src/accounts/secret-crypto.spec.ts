import { randomBytes } from 'node:crypto';
import {
  decryptSecret,
  encryptSecret,
  generateWebhookSecret,
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

  it('encryption round-trips and never stores the plaintext', () => {
    const key = randomBytes(32);
    const secret = generateWebhookSecret();
    const stored = encryptSecret(key, secret);
    expect(stored).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(secret.slice(6, 20));
    expect(decryptSecret(key, stored)).toBe(secret);
  });

  it('uses a fresh IV each time', () => {
    const key = randomBytes(32);
    const secret = generateWebhookSecret();
    expect(encryptSecret(key, secret)).not.toBe(encryptSecret(key, secret));
  });

  it('fails under the wrong key', () => {
    const stored = encryptSecret(randomBytes(32), generateWebhookSecret());
    expect(() => decryptSecret(randomBytes(32), stored)).toThrow();
  });

  it('fails on a tampered ciphertext or an unknown format', () => {
    const key = randomBytes(32);
    const [version, iv, tag, ciphertext] = encryptSecret(key, generateWebhookSecret()).split('.');
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] ^= 1;
    expect(() => decryptSecret(key, [version, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => decryptSecret(key, ['v2', iv, tag, ciphertext].join('.'))).toThrow('Unrecognised');
    expect(() => decryptSecret(key, 'garbage')).toThrow();
  });
});
