import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AccountSecret } from 'src/accounts/account-secret.entity';
import { AccountSecretRepository } from 'src/accounts/account-secret.repository';
import { Account } from 'src/accounts/account.entity';
import { AccountRepository } from 'src/accounts/account.repository';
import { CredentialCache } from 'src/accounts/credential-cache';
import { CredentialChangeFeed } from 'src/accounts/credential-change-feed';
import { credentialLookups } from 'src/accounts/credential-changes';
import { SecretKeyring, generateWebhookSecret, hashSecret, looksLikeWebhookSecret } from 'src/accounts/secret-crypto';
import { webhookUrlProblem } from 'src/accounts/webhook-url';
import { ApiError } from 'src/common/api-error';
import { APP_CONFIG } from 'src/config/config.module';
import type { AppConfig } from 'src/config/app-config';

export interface CreatedAccount {
  account: Account;
  secret: string;
}

export interface RotatedSecret {
  secret: string;
  previousExpiresAt: Date | null;
}

@Injectable()
export class AccountsService {
  /** Seals new secrets under SECRET_ENCRYPTION_KEY's first key. */
  private readonly keyring: SecretKeyring;

  constructor(
    private readonly accounts: AccountRepository,
    private readonly secrets: AccountSecretRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly credentials: CredentialCache,
    private readonly credentialChanges: CredentialChangeFeed,
  ) {
    this.keyring = new SecretKeyring(config.secretEncryptionKeys);
  }

  async create(name: string, webhookUrl: string | null): Promise<CreatedAccount> {
    this.checkUrl(webhookUrl);
    const now = new Date();
    const account = Object.assign(new Account(), { id: uuidv7(), name, webhookUrl, createdAt: now, updatedAt: now });
    const secret = generateWebhookSecret();
    await this.credentialChanges.change(account.id, async (manager) => {
      await this.accounts.insert(manager, account);
      await this.secrets.insert(manager, this.secretRow(account.id, secret, now));
    });
    return { account, secret };
  }

  async get(id: string): Promise<Account> {
    const account = await this.accounts.findById(id);
    if (!account) throw ApiError.notFound('account');
    return account;
  }

  async exists(id: string, manager?: EntityManager): Promise<boolean> {
    return this.accounts.exists(id, manager);
  }

  /**
   * Updates the account; `alsoIn`, given the account as it was, runs in the same transaction after
   * the update (the webhooks feature enables the endpoint of a new URL there).
   */
  async update(
    id: string,
    changes: { name?: string; webhookUrl?: string | null },
    alsoIn?: (manager: EntityManager, before: Readonly<Account>) => Promise<void>,
  ): Promise<Account> {
    if (changes.webhookUrl !== undefined) this.checkUrl(changes.webhookUrl);
    const account = await this.get(id);
    const before = { ...account };
    if (changes.name !== undefined) account.name = changes.name;
    if (changes.webhookUrl !== undefined) account.webhookUrl = changes.webhookUrl;
    account.updatedAt = new Date();
    await this.credentialChanges.change(id, async (manager) => {
      const { name, webhookUrl, updatedAt } = account;
      await this.accounts.update(manager, id, { name, webhookUrl, updatedAt });
      if (alsoIn) await alsoIn(manager, before);
    });
    return account;
  }

  /**
   * Issues a new secret; the current one stays valid for the grace period, and a secret still in
   * the grace of an earlier rotation stops at once.
   */
  async rotateSecret(id: string, graceSeconds: number): Promise<RotatedSecret> {
    return this.credentialChanges.change(
      id,
      async (manager) => {
        const locked = await this.accounts.lockById(manager, id);
        if (!locked) throw ApiError.notFound('account');
        const now = new Date();
        await this.secrets.endGracePeriods(manager, id, now);
        const previousExpiresAt = new Date(now.getTime() + graceSeconds * 1000);
        const hadCurrent = await this.secrets.startGracePeriod(manager, id, previousExpiresAt);
        const secret = generateWebhookSecret();
        await this.secrets.insert(manager, this.secretRow(id, secret, now));
        return { secret, previousExpiresAt: hadCurrent ? previousExpiresAt : null };
      },
      { confirm: true },
    );
  }

  /**
   * The account a client credential belongs to, or null for any kind of bad credential: from the
   * credential cache while it is trusted, else from the database.
   */
  async accountIdForSecret(credential: string): Promise<string | null> {
    if (!looksLikeWebhookSecret(credential)) return null;
    const hash = hashSecret(credential);
    const key = hash.toString('base64');
    const cached = this.credentials.get(key);
    if (cached !== undefined) {
      credentialLookups.inc({ source: 'cache' });
      return cached;
    }
    credentialLookups.inc({ source: 'database' });
    const generation = this.credentials.generation;
    const startedAt = Date.now();
    const owner = await this.secrets.findActiveByHash(hash);
    if (!owner) return null;
    this.credentials.set(key, owner.accountId, owner.remainingMs, generation, startedAt);
    return owner.accountId;
  }

  /** The account's webhook URL; null when it has none or does not exist. */
  async webhookUrl(accountId: string): Promise<string | null> {
    return this.accounts.webhookUrl(accountId);
  }

  /** A 400 naming `field` when the URL breaks the webhook_url rules. */
  checkUrl(webhookUrl: string | null, field = 'webhook_url'): void {
    if (webhookUrl === null) return;
    const problem = webhookUrlProblem(webhookUrl, { allowInsecure: this.config.webhookAllowInsecureUrls });
    if (problem) throw ApiError.validation(field, problem);
  }

  private secretRow(accountId: string, secret: string, now: Date): AccountSecret {
    return Object.assign(new AccountSecret(), {
      id: uuidv7(),
      accountId,
      secretHash: hashSecret(secret),
      secretCiphertext: this.keyring.seal(secret),
      createdAt: now,
      expiresAt: null,
    });
  }
}
