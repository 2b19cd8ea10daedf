import { Body, Controller, Get, Patch, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnswersAfterAuditChain } from 'src/audit/audit-chainer';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { CurrentAccountId, RequiresCredential } from 'src/http/credentials';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { UpdateWebhookEndpointDto, WebhookEndpointResponseDto } from 'src/webhooks/endpoint/webhook-endpoint.dto';
import { WebhookEndpointService } from 'src/webhooks/endpoint/webhook-endpoint.service';

/** The client's own webhook endpoint: no id in the route, so another account's is out of reach. */
@ApiTags('public')
@RequiresCredential('client')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/public/kyc/webhook-endpoint')
export class WebhookEndpointController {
  constructor(private readonly endpoints: WebhookEndpointService) {}

  @Get()
  @ApiOperation({ summary: 'Your webhook endpoint: url, enabled or disabled (and why), held events, health' })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  async get(@CurrentAccountId() accountId: string): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.view(accountId);
  }

  @Patch()
  @AnswersAfterAuditChain()
  @ApiOperation({
    summary: 'Change the url, or enable/disable the endpoint; enabling sends the held events, oldest first',
  })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiErrors(
    ApiError.validation('url', 'must be an https URL'),
    ApiError.validation('status', 'must be one of the following values: enabled, disabled'),
  )
  async update(
    @CurrentAccountId() accountId: string,
    @Body() dto: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.update(accountId, dto, 'client');
  }
}
