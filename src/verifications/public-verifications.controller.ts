import { Controller, Get, Header, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnswersAfterAuditChain } from 'src/audit/audit-chainer';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { CurrentAccountId, RequiresCredential } from 'src/http/credentials';
import { invalidCursor } from 'src/common/pagination';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { invalidId, UuidParamPipe } from 'src/http/uuid-param.pipe';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { GetVerificationQueryDto, minVersionOf } from 'src/verifications/get-verification.query';
import { ListVerificationsQueryDto } from 'src/verifications/list-verifications.query';
import {
  VerificationDetailResponseDto,
  VerificationListResponseDto,
} from 'src/verifications/verification-response.dto';
import { VerificationListService } from 'src/verifications/verification-list.service';
import { VerificationsService } from 'src/verifications/verifications.service';

@ApiTags('public')
@RequiresCredential('client')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/public/kyc/verifications')
export class PublicVerificationsController {
  constructor(
    private readonly search: VerificationListService,
    private readonly verifications: VerificationsService,
    private readonly redactor: VerificationRedactor,
  ) {}

  /**
   * Answers the body as JSON text joined from the rows' stored texts (VerificationListService.list). Express would
   * send a string as text/html, so the type is set here, before the handler runs.
   */
  @Get()
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: "List and search the caller's verifications (keyset paging)" })
  @ApiOkResponse({ type: VerificationListResponseDto })
  @ApiErrors(ApiError.validation('limit', 'must not be greater than 100'), invalidCursor())
  async list(@CurrentAccountId() accountId: string, @Query() query: ListVerificationsQueryDto): Promise<string> {
    return this.search.list(accountId, query);
  }

  /** Answers JSON text, the stored text with its history, like the list. */
  @Get(':id')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: 'One verification with its status history' })
  @ApiOkResponse({ type: VerificationDetailResponseDto })
  @ApiErrors(
    invalidId(),
    ApiError.validation('min_version', 'must be a positive integer'),
    ApiError.notFound('verification'),
  )
  async get(
    @CurrentAccountId() accountId: string,
    @Param('id', UuidParamPipe) id: string,
    @Query() query: GetVerificationQueryDto,
  ): Promise<string> {
    return this.verifications.getForAccount(accountId, id, minVersionOf(query));
  }

  @Post(':id/redact')
  @AnswersAfterAuditChain()
  @HttpCode(200)
  @ApiOperation({
    summary: "Erase the applicant's personal data (GDPR Art. 17 and the like)",
    description:
      'applicant and document become null, metadata {}, external_user_id "[redacted]"; redacted_at is set and ' +
      'updated_at moves to it. id, status, version, the other timestamps, rejection_reasons and status_history stay: ' +
      'they are the decision record. In the same transaction every copy goes too: the search data behind q, the ' +
      'stored payload of every webhook event of the verification, and the response excerpts of their attempts; and ' +
      'one verification.redacted event is created. Allowed in any status; redacting again answers the same body and ' +
      'changes nothing. A redacted verification takes no further status change (409 invalid_transition). Body: none, ' +
      'or {}.',
  })
  @ApiOkResponse({ type: VerificationDetailResponseDto })
  @ApiErrors(
    ApiError.validation('reason', 'is not allowed'),
    invalidId(),
    ApiError.notFound('verification'),
    ApiError.legalHold(new Date('2033-01-01T00:00:00.000Z')),
  )
  async redact(
    @CurrentAccountId() accountId: string,
    @Param('id', UuidParamPipe) id: string,
  ): Promise<VerificationDetailResponseDto> {
    return this.redactor.redact(accountId, id);
  }
}
