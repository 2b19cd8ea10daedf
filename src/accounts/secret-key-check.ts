import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AccountSecretRepository, type SealerSample } from 'src/accounts/account-secret.repository';
import { SecretKeyError, SecretKeyring } from 'src/accounts/secret-crypto';
import { type AppConfig, ConfigError } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { isDatabaseUnavailable } from 'src/database/dependency-errors';

const RETRY_MS = 5_000;

/**
 * What is wrong with SECRET_ENCRYPTION_KEY for the stored secrets, or null: every key that sealed a
 * stored secret must be held, and must open one of the secrets it sealed.
 */
export function keyProblem(keyring: SecretKeyring, sealers: readonly SealerSample[]): string | null {
  for (const { sealer, secrets, sample } of sealers) {
    try {
      keyring.open(sample);
    } catch (error) {
      if (!(error instanceof SecretKeyError)) throw error;
      const which = sealer === 'v1' ? 'stored before key ids were recorded' : `sealed by key ${sealer}`;
      return (
        `cannot decrypt the stored webhook secrets (${secrets} ${which}): ${error.reason}. ` +
        'Set it to the key they were created with; during a rotation list every key, newest first'
      );
    }
  }
  return null;
}

/** SECRET_ENCRYPTION_KEY against the stored secrets, for every entry point that seals or reads them. */
@Injectable()
export class SecretKeyVerifier {
  private readonly keyring: SecretKeyring;

  constructor(
    private readonly secrets: AccountSecretRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.keyring = new SecretKeyring(config.secretEncryptionKeys);
  }

  /** The problem, null when there is none, 'unchecked' when PostgreSQL cannot be asked. */
  async problem(): Promise<string | null | 'unchecked'> {
    try {
      return keyProblem(this.keyring, await this.secrets.sealers());
    } catch (error) {
      // 42P01: a database not migrated yet holds no secret.
      if ((error as { code?: string }).code === '42P01') return null;
      if (isDatabaseUnavailable(error)) return 'unchecked';
      throw error;
    }
  }

  /** Throws the one-line ConfigError naming SECRET_ENCRYPTION_KEY (or the database's error) unless the keys open what is stored. */
  async assertOpensStored(): Promise<void> {
    const problem = await this.problem();
    if (problem === 'unchecked') throw new Error('PostgreSQL is unavailable: SECRET_ENCRYPTION_KEY cannot be checked');
    if (problem !== null) throw new ConfigError('SECRET_ENCRYPTION_KEY', problem);
  }
}

/**
 * Every role checks at start that its SECRET_ENCRYPTION_KEY opens what is stored, and stops with one
 * line naming it if not: a wrong key would otherwise fail every delivery of every account. With
 * PostgreSQL unreachable at start, the check waits for it (every 5 s) and stops the process then.
 */
@Injectable()
export class SecretKeyCheck implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SecretKeyCheck.name);
  private timer?: NodeJS.Timeout;

  constructor(private readonly verifier: SecretKeyVerifier) {}

  async onApplicationBootstrap(): Promise<void> {
    const problem = await this.verifier.problem();
    if (problem === 'unchecked') {
      this.logger.warn(
        'PostgreSQL is unavailable: SECRET_ENCRYPTION_KEY will be checked against the stored secrets once it answers',
      );
      this.retryLater();
    } else if (problem !== null) {
      throw new ConfigError('SECRET_ENCRYPTION_KEY', problem);
    }
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  private retryLater(): void {
    this.timer = setTimeout(() => {
      void this.verifier.problem().then(
        (problem) => {
          if (problem === 'unchecked') return this.retryLater();
          if (problem === null) return this.logger.log('SECRET_ENCRYPTION_KEY decrypts the stored secrets');
          process.stderr.write(`${new ConfigError('SECRET_ENCRYPTION_KEY', problem).message}\n`);
          process.exit(1);
        },
        (error: Error) => {
          this.logger.warn(`SECRET_ENCRYPTION_KEY could not be checked yet (${error.message}); trying again`);
          this.retryLater();
        },
      );
    }, RETRY_MS);
    this.timer.unref();
  }
}
