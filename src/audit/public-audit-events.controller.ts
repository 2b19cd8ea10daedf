import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  AuditActorDto,
  ClientAuditEventListResponseDto,
  HiddenOperatorDto,
  ListClientAuditEventsQueryDto,
} from 'src/audit/audit-events.dto';
import { AuditEventsService } from 'src/audit/audit-events.service';
import { type ClientAuditEventJson, toClientAuditEventJson } from 'src/audit/audit-entry';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { invalidCursor, type ListPage } from 'src/common/pagination';
import { CurrentAccountId, RequiresCredential } from 'src/http/credentials';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';

/** The client's view of its own account's trail: what its credential did, and what operators and the service did to it. */
@ApiTags('public')
@ApiExtraModels(AuditActorDto, HiddenOperatorDto)
@RequiresCredential('client')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/public/kyc/audit-events')
export class PublicAuditEventsController {
  constructor(private readonly audit: AuditEventsService) {}

  @Get()
  @ApiOperation({
    summary: "Your account's audit trail, newest first; operators appear as { type: operator } only",
  })
  @ApiOkResponse({ type: ClientAuditEventListResponseDto })
  @ApiErrors(ApiError.validation('from', 'must be an ISO 8601 date-time'), invalidCursor())
  async list(
    @CurrentAccountId() accountId: string,
    @Query() query: ListClientAuditEventsQueryDto,
  ): Promise<ListPage<ClientAuditEventJson>> {
    const page = await this.audit.list(query, accountId);
    return { ...page, data: page.data.map(toClientAuditEventJson) };
  }
}
