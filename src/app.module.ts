import { DynamicModule, Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { AdminModule } from 'src/admin/admin.module';
import { AuditApiModule } from 'src/audit/audit-api.module';
import { CredentialListenerModule } from 'src/accounts/credential-listener.module';
import { SecretKeyCheckModule } from 'src/accounts/secret-key-check.module';
import { AuthModule } from 'src/auth/auth.module';
import type { AppRole } from 'src/config/app-config';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { OpsModule } from 'src/ops/ops.module';
import { RetentionWorkerModule } from 'src/retention/retention.module';
import { VerificationsModule } from 'src/verifications/verifications.module';
import { WebhookWorkerModule } from 'src/webhooks/webhook-worker.module';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

/** The HTTP API: admin, internal and public routes, and the delivery log. */
const API_MODULES = [
  AccountsModule,
  AdminModule,
  CredentialListenerModule,
  WebhooksModule,
  VerificationsModule,
  AuthModule,
  AuditApiModule,
];
/** The delivery worker, the outbox sweeper and the retention passes. */
const WORKER_MODULES = [WebhookWorkerModule, RetentionWorkerModule];

/**
 * APP_ROLE picks the modules; every role checks SECRET_ENCRYPTION_KEY at start and serves health and
 * metrics (with the delivery gauges).
 */
@Module({})
export class AppModule {
  static forRole(role: AppRole): DynamicModule {
    const features =
      role === 'api' ? API_MODULES : role === 'worker' ? WORKER_MODULES : [...API_MODULES, ...WORKER_MODULES];
    return {
      module: AppModule,
      imports: [ConfigModule, DatabaseModule, SecretKeyCheckModule, ...features, OpsModule],
    };
  }
}
