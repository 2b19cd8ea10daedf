import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequiresCredential } from 'src/common/credentials';
import { UndeclaredInputGuard } from 'src/common/undeclared-input.guard';
import { UuidParamPipe } from 'src/common/uuid-param.pipe';
import { VerificationResponseDto } from 'src/verifications/verification.mapper';
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
  async create(@Body() dto: CreateVerificationDto): Promise<VerificationResponseDto> {
    return this.verifications.create(dto);
  }

  @Post(':id/transitions')
  @HttpCode(200)
  @ApiOperation({ summary: 'Move a verification through the state machine; emits one webhook event' })
  @ApiOkResponse({ type: VerificationResponseDto })
  async transition(
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: TransitionVerificationDto,
  ): Promise<VerificationResponseDto> {
    return this.verifications.transition(id, dto);
  }
}
