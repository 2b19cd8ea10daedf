import { Controller, Get, Query, Res, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  AuditEventListResponseDto,
  ExportAuditEventsQueryDto,
  ListAuditEventsQueryDto,
} from 'src/audit/audit-events.dto';
import { AuditEventsService } from 'src/audit/audit-events.service';
import type { AuditEventJson } from 'src/audit/audit-entry';
import { RequiresPermission } from 'src/auth/permissions';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { invalidCursor, type ListPage } from 'src/common/pagination';
import { RequiresCredential } from 'src/http/credentials';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';

const FORBIDDEN = new ApiError('forbidden', "The credential's roles lack the permission this route needs");

@ApiTags('admin')
@RequiresCredential('admin')
@RequiresPermission('audit:read')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/admin/audit-events')
export class AdminAuditEventsController {
  constructor(private readonly audit: AuditEventsService) {}

  @Get()
  @ApiOperation({ summary: 'The audit trail, newest first (keyset paging); roles auditor, compliance, admin' })
  @ApiOkResponse({ type: AuditEventListResponseDto })
  @ApiErrors(ApiError.validation('from', 'must be an ISO 8601 date-time'), invalidCursor(), FORBIDDEN)
  async list(@Query() query: ListAuditEventsQueryDto): Promise<ListPage<AuditEventJson>> {
    return this.audit.list(query);
  }

  @Get('export')
  @ApiOperation({
    summary: 'The audit trail as NDJSON, oldest first, one entry a line, streamed; check the chain offline',
    description:
      'Each line is an entry as the list shows it. hash = hex SHA-256 of previous_hash, a line feed, and the ' +
      'entry without hash as JSON with keys sorted at every depth and no spaces; the first previous_hash is 64 zeros.',
  })
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'One audit_event JSON object per line',
    content: { 'application/x-ndjson': { schema: { type: 'string' } } },
  })
  @ApiErrors(ApiError.validation('from', 'must be an ISO 8601 date-time'), FORBIDDEN)
  async export(@Query() query: ExportAuditEventsQueryDto, @Res() res: Response): Promise<void> {
    const range = this.audit.exportRange(query.from, query.to);
    await this.audit.recordExport();
    res.status(200).setHeader('content-type', 'application/x-ndjson; charset=utf-8');
    try {
      for await (const batch of this.audit.exported(range)) {
        const text = batch.map((entry) => `${JSON.stringify(entry)}\n`).join('');
        if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve));
        if (res.destroyed) return;
      }
      res.end();
    } catch {
      // The status line is gone: a cut stream (no final line feed) is how the auditor learns of it.
      res.destroy();
    }
  }
}
