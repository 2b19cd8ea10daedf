import { Module } from '@nestjs/common';
import { AuditEventsService } from 'src/audit/audit-events.service';
import { AuditModule } from 'src/audit/audit.module';
import { PublicAuditEventsController } from 'src/audit/public-audit-events.controller';
import { cursorCodecProvider } from 'src/common/cursor.provider';

/** Reading the trail: the client's view of its own account here, the admin's list and export in src/admin/. */
@Module({
  imports: [AuditModule],
  controllers: [PublicAuditEventsController],
  providers: [cursorCodecProvider, AuditEventsService],
  exports: [AuditEventsService],
})
export class AuditApiModule {}
