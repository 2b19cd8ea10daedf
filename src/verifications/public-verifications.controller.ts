import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentAccountId, RequiresCredential } from 'src/common/credentials';
import type { ListPage } from 'src/common/pagination';
import { UndeclaredInputGuard } from 'src/common/undeclared-input.guard';
import { UuidParamPipe } from 'src/common/uuid-param.pipe';
import { ListVerificationsQueryDto } from 'src/verifications/list-verifications.query';
import {
  VerificationDetailResponseDto,
  VerificationListResponseDto,
  VerificationResponseDto,
} from 'src/verifications/verification.mapper';
import { VerificationSearchService } from 'src/verifications/verification-search.service';
import { VerificationsService } from 'src/verifications/verifications.service';

@ApiTags('public')
@RequiresCredential('client')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/public/kyc/verifications')
export class PublicVerificationsController {
  constructor(
    private readonly search: VerificationSearchService,
    private readonly verifications: VerificationsService,
  ) {}

  @Get()
  @ApiOperation({ summary: "List and search the caller's verifications (keyset paging)" })
  @ApiOkResponse({ type: VerificationListResponseDto })
  async list(
    @CurrentAccountId() accountId: string,
    @Query() query: ListVerificationsQueryDto,
  ): Promise<ListPage<VerificationResponseDto>> {
    return this.search.list(accountId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One verification with its status history' })
  @ApiOkResponse({ type: VerificationDetailResponseDto })
  async get(
    @CurrentAccountId() accountId: string,
    @Param('id', UuidParamPipe) id: string,
  ): Promise<VerificationDetailResponseDto> {
    return this.verifications.getForAccount(accountId, id);
  }
}
