import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { RequiresCredential } from 'src/http/credentials';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { invalidId, UuidParamPipe } from 'src/http/uuid-param.pipe';
import { TransitionRefusal } from 'src/verifications/verification-transition';
import { VerificationResponseDto } from 'src/verifications/verification-response.dto';
import { CreateVerificationDto, TransitionVerificationDto } from 'src/verifications/verifications.dto';
import { VerificationsService } from 'src/verifications/verifications.service';

@ApiTags('internal')
@RequiresCredential('internal')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/internal/kyc/verifications')
export class InternalVerificationsController {
  constructor(private readonly verifications: VerificationsService) {}

  @Post()
  @ApiOperation({ summary: 'Start a verification (pending); no webhook is sent for creation' })
  @ApiCreatedResponse({ type: VerificationResponseDto })
  @ApiErrors(
    ApiError.validation('account_id', 'must be a UUID'),
    ApiError.validation('applicant.email', 'must be an email'),
    ApiError.notFound('account'),
  )
  async create(@Body() dto: CreateVerificationDto): Promise<VerificationResponseDto> {
    return this.verifications.create(dto);
  }

  @Post(':id/transitions')
  @HttpCode(200)
  @ApiOperation({ summary: 'Move a verification through the state machine; emits one webhook event' })
  @ApiOkResponse({ type: VerificationResponseDto })
  @ApiErrors(
    TransitionRefusal.reasonsMissing(),
    invalidId(),
    ApiError.notFound('verification'),
    TransitionRefusal.notAllowed('approved', 'processing'),
    TransitionRefusal.redacted(),
    TransitionRefusal.versionConflict(2, 3),
  )
  async transition(
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: TransitionVerificationDto,
  ): Promise<VerificationResponseDto> {
    return this.verifications.transition(id, dto);
  }
}
