import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AccountSecret } from 'src/accounts/account-secret.entity';
import { AccountSecretRepository, secretCommitted } from 'src/accounts/account-secret.repository';
import { Account } from 'src/accounts/account.entity';
import { AccountRepository, accountCommitted } from 'src/accounts/account.repository';
import { CredentialCache } from 'src/accounts/credential-cache';
import { CredentialChangeFeed } from 'src/accounts/credential-change-feed';
import { credentialLookups } from 'src/accounts/credential-changes';
import { SecretKeyring, generateWebhookSecret, hashSecret, looksLikeWebhookSecret } from 'src/accounts/secret-crypto';
import { webhookUrlProblem } from 'src/accounts/webhook-url';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { ApiError } from 'src/common/api-error';
import { CommitSettler } from 'src/database/commit-settler';
import type { CommitProbe } from 'src/database/in-doubt';
import { APP_CONFIG } from 'src/config/config.module';
import type { AppConfig } from 'src/config/app-config';

const target = (id: string) => ({ type: 'account', id });

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
    private readonly trail: AuditTrail,
    private readonly settler: CommitSettler,
  ) {
    this.keyring = new SecretKeyring(config.secretEncryptionKeys);
  }

  async create(name: string, webhookUrl: string | null): Promise<CreatedAccount> {
    this.checkUrl(webhookUrl);
    const now = new Date();
    const account = Object.assign(new Account(), { id: uuidv7(), name, webhookUrl, createdAt: now, updatedAt: now });
    const secret = generateWebhookSecret();
    await this.credentialChanges.change(
      account.id,
      async (manager) => {
        await this.accounts.insert(manager, account);
        await this.secrets.insert(manager, this.secretRow(account.id, secret, now));
        const changes = webhookUrl === null ? ['name', 'webhook_secret'] : ['name', 'webhook_url', 'webhook_secret'];
        await this.trail.record(manager, {
          action: 'account.created',
          target: target(account.id),
          accountId: account.id,
          changes,
        });
      },
      { committed: () => accountCommitted(account.id) },
    );
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
   * Updates the fields `changes` names, and only those, in one statement; `alsoIn`, given the url
   * the account had (read under the row's lock), runs in the same transaction after the update (the
   * webhooks feature enables the endpoint of a new URL there). `committed` shows the update
   * committed if its commit's answer is lost (the caller's audit entry: auditEntryCommitted).
   */
  async update(
    id: string,
    changes: { name?: string; webhookUrl?: string | null },
    alsoIn?: (manager: EntityManager, previousUrl: string | null) => Promise<void>,
    committed: CommitProbe | null = null,
  ): Promise<Account> {
    if (changes.webhookUrl !== undefined) this.checkUrl(changes.webhookUrl);
    // Not a credential change (the cache maps secrets to accounts, nothing else), so no NOTIFY:
    // PostgreSQL commits NOTIFYing transactions one at a time, every endpoint change among them.
    return this.settler.transaction(
      async (manager) => {
        const updated = await this.accounts.updateNamed(manager, id, changes, new Date());
        if (!updated) throw ApiError.notFound('account');
        if (alsoIn) await alsoIn(manager, updated.previousUrl);
        return updated.account;
      },
      () => committed,
    );
  }

  /**
   * Issues a new secret; the current one stays valid for the grace period, and a secret still in
   * the grace of an earlier rotation stops at once.
   */
  async rotateSecret(id: string, graceSeconds: number): Promise<RotatedSecret> {
    const secretId = uuidv7();
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
        await this.secrets.insert(manager, this.secretRow(id, secret, now, secretId));
        const entry = {
          action: 'account.secret_rotated',
          target: target(id),
          accountId: id,
          changes: ['webhook_secret'],
        };
        await this.trail.record(manager, entry);
        return { secret, previousExpiresAt: hadCurrent ? previousExpiresAt : null };
      },
      { confirm: true, committed: () => secretCommitted(secretId) },
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

  private secretRow(accountId: string, secret: string, now: Date, id = uuidv7()): AccountSecret {
    return Object.assign(new AccountSecret(), {
      id,
      accountId,
      secretHash: hashSecret(secret),
      secretCiphertext: this.keyring.seal(secret),
      createdAt: now,
      expiresAt: null,
    });
  }
}
