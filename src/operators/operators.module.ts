import { Logger, Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';
import { OperatorKeyRepository } from 'src/operators/operator-key.repository';
import { OperatorKeysService } from 'src/operators/operator-keys.service';
import { OidcVerifier } from 'src/operators/oidc-verifier';

/** The OIDC access-token verifier, or null when OIDC_ISSUER_URL is unset. */
export const OIDC_VERIFIER = Symbol('OIDC_VERIFIER');

const logger = new Logger('Oidc');

/**
 * Operator identity: operator keys and OIDC access tokens, for the credential guard and the queue
 * dashboard; the keys' admin routes (src/admin/) and the CLI.
 */
@Module({
  imports: [DatabaseModule, AuditModule],
  providers: [
    ...repositoryProviders(OperatorKeyRepository),
    OperatorKeysService,
    {
      provide: OIDC_VERIFIER,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        config.oidc ? new OidcVerifier(config.oidc, (message) => logger.warn(message)) : null,
    },
  ],
  exports: [OperatorKeysService, OIDC_VERIFIER],
})
export class OperatorsModule {}
