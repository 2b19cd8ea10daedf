import { Module } from '@nestjs/common';
import { AuditChainer } from 'src/audit/audit-chainer';
import { AuditEventRepository } from 'src/audit/audit-event.repository';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';

/**
 * The audit trail's recorder, for every feature that changes something on someone's behalf; a module
 * whose controllers carry `@AnswersAfterAuditChain()` imports it (the interceptor needs the chainer).
 */
@Module({
  imports: [DatabaseModule],
  providers: [...repositoryProviders(AuditEventRepository), AuditChainer, AuditTrail],
  exports: [AuditTrail, AuditEventRepository, AuditChainer],
})
export class AuditModule {}
