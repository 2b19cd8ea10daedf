import { Body, Controller, Delete, Get, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnswersAfterAuditChain } from 'src/audit/audit-chainer';
import { RequiresPermission } from 'src/auth/permissions';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { RequiresCredential } from 'src/http/credentials';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { invalidId, UuidParamPipe } from 'src/http/uuid-param.pipe';
import { LegalHoldResponseDto, PutLegalHoldDto } from 'src/verifications/legal-hold.dto';
import { LegalHoldsService } from 'src/verifications/legal-holds.service';

const FORBIDDEN = new ApiError('forbidden', "The credential's roles lack the permission this route needs");

/** Legal holds (roles compliance, admin): while one is active the verification is neither redacted on request nor by retention. */
@ApiTags('admin')
@RequiresCredential('admin')
@RequiresPermission('legal_holds:manage')
@UseGuards(UndeclaredInputGuard)
@AnswersAfterAuditChain()
@Controller('api/v1/admin/verifications/:id/legal-hold')
export class AdminLegalHoldsController {
  constructor(private readonly holds: LegalHoldsService) {}

  @Put()
  @ApiOperation({ summary: 'Place a legal hold (a second PUT replaces it); placed_by is the caller' })
  @ApiOkResponse({ type: LegalHoldResponseDto })
  @ApiErrors(
    ApiError.validation('until', 'must be in the future'),
    invalidId(),
    ApiError.notFound('verification'),
    FORBIDDEN,
  )
  async put(@Param('id', UuidParamPipe) id: string, @Body() dto: PutLegalHoldDto): Promise<LegalHoldResponseDto> {
    return this.holds.place(id, dto);
  }

  @Get()
  @ApiOperation({ summary: "The verification's legal hold; 404 when it has none" })
  @ApiOkResponse({ type: LegalHoldResponseDto })
  @ApiErrors(invalidId(), ApiError.notFound('legal hold'), FORBIDDEN)
  async get(@Param('id', UuidParamPipe) id: string): Promise<LegalHoldResponseDto> {
    return this.holds.get(id);
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({ summary: 'Release the legal hold; retention redacts the verification on its next pass if it is due' })
  @ApiNoContentResponse({ description: 'Released (or there was none)' })
  @ApiErrors(invalidId(), ApiError.notFound('verification'), FORBIDDEN)
  async release(@Param('id', UuidParamPipe) id: string): Promise<void> {
    await this.holds.release(id);
  }
}
