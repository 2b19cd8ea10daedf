import { Inject, Injectable } from '@nestjs/common';
import { AccountSecretRepository } from 'src/accounts/account-secret.repository';
import { SecretKeyError, SecretKeyring } from 'src/accounts/secret-crypto';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

export interface ReencryptionCounts {
  /** The key id every secret is now sealed under. */
  keyId: string;
  reencrypted: number;
  batches: number;
  /** Secrets no key of SECRET_ENCRYPTION_KEY opens: left as they are. */
  undecryptable: string[];
}

/**
 * The last step of a key rotation: every stored secret not sealed by SECRET_ENCRYPTION_KEY's first
 * key is opened with the key that sealed it and sealed again under the first, in batches of one
 * statement each, so the older keys can then be dropped. Safe to run again, and beside a running
 * service: a secret rotated meanwhile keeps its newer row.
 */
@Injectable()
export class SecretReencryption {
  private readonly keyring: SecretKeyring;

  constructor(
    private readonly secrets: AccountSecretRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.keyring = new SecretKeyring(config.secretEncryptionKeys);
  }

  async run(batchSize: number): Promise<ReencryptionCounts> {
    const counts: ReencryptionCounts = { keyId: this.keyring.currentId, reencrypted: 0, batches: 0, undecryptable: [] };
    for (let after: string | null = null; ;) {
      const batch = await this.secrets.sealedByOtherThan(this.keyring.currentId, after, batchSize);
      if (batch.length === 0) return counts;
      after = batch[batch.length - 1].id;
      const changes = [];
      for (const { id, ciphertext } of batch) {
        try {
          changes.push({ id, previous: ciphertext, ciphertext: this.keyring.seal(this.keyring.open(ciphertext)) });
        } catch (error) {
          if (!(error instanceof SecretKeyError)) throw error;
          counts.undecryptable.push(id);
        }
      }
      counts.reencrypted += await this.secrets.replaceCiphertexts(changes);
      counts.batches += 1;
    }
  }
}
