import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnswersAfterAuditChain } from 'src/audit/audit-chainer';
import { RequiresPermission } from 'src/auth/permissions';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { RequiresCredential } from 'src/http/credentials';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { invalidId, UuidParamPipe } from 'src/http/uuid-param.pipe';
import { toOperatorKeyResponse } from 'src/operators/operator-key.mapper';
import {
  CreateOperatorKeyDto,
  CreatedOperatorKeyResponseDto,
  OperatorKeyListResponseDto,
} from 'src/operators/operator-keys.dto';
import { OperatorKeysService } from 'src/operators/operator-keys.service';

@ApiTags('admin')
@RequiresCredential('admin')
@UseGuards(UndeclaredInputGuard)
@AnswersAfterAuditChain()
@Controller('api/v1/admin/operator-keys')
export class AdminOperatorKeysController {
  constructor(private readonly keys: OperatorKeysService) {}

  @Post()
  @RequiresPermission('operator_keys:manage')
  @ApiOperation({ summary: 'Issue an operator key with one role; the response is the only time the key is shown' })
  @ApiCreatedResponse({ type: CreatedOperatorKeyResponseDto })
  @ApiErrors(
    ApiError.validation('role', 'must be one of the following values: viewer, operator, compliance, auditor, admin'),
  )
  async create(@Body() dto: CreateOperatorKeyDto): Promise<CreatedOperatorKeyResponseDto> {
    const { record, key } = await this.keys.create(dto.name, dto.role, dto.expires_in_days);
    return { ...toOperatorKeyResponse(record), key };
  }

  @Get()
  @RequiresPermission('operator_keys:manage')
  @ApiOperation({ summary: 'Every operator key, newest first, without the keys themselves' })
  @ApiOkResponse({ type: OperatorKeyListResponseDto })
  async list(): Promise<OperatorKeyListResponseDto> {
    const keys = await this.keys.list();
    return { object: 'list', data: keys.map(toOperatorKeyResponse), has_more: false, next_cursor: null };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequiresPermission('operator_keys:manage')
  @ApiOperation({ summary: 'Revoke an operator key: every process refuses it from then on' })
  @ApiNoContentResponse({ description: 'Revoked (revoking a revoked key changes nothing)' })
  @ApiErrors(invalidId(), ApiError.notFound('operator key'))
  async revoke(@Param('id', UuidParamPipe) id: string): Promise<void> {
    await this.keys.revoke(id);
  }
}
