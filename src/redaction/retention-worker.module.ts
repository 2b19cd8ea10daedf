import { Module } from '@nestjs/common';
import { RedactionModule } from 'src/redaction/redaction.module';
import { RetentionWorker } from 'src/redaction/retention-worker.service';

/** The worker role's retention schedule. */
@Module({
  imports: [RedactionModule],
  providers: [RetentionWorker],
})
export class RetentionWorkerModule {}
