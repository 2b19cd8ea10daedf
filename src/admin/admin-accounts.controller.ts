import { Body, Controller, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { toAccountResponse } from 'src/accounts/account.mapper';
import { AnswersAfterAuditChain } from 'src/audit/audit-chainer';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { UpdateWebhookEndpointDto, WebhookEndpointResponseDto } from 'src/webhooks/endpoint/webhook-endpoint.dto';
import { WebhookEndpointService } from 'src/webhooks/endpoint/webhook-endpoint.service';
import { AdminAccountResponseDto } from 'src/admin/admin-account.dto';
import {
  AccountResponseDto,
  CreateAccountDto,
  CreatedAccountResponseDto,
  RotateSecretDto,
  RotatedSecretResponseDto,
  UpdateAccountDto,
} from 'src/accounts/accounts.dto';
import { AccountsService } from 'src/accounts/accounts.service';
import { INSECURE_REFUSED } from 'src/accounts/webhook-url';
import { RequiresPermission } from 'src/auth/permissions';
import { RequiresCredential } from 'src/http/credentials';
import { iso } from 'src/common/time';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { invalidId, UuidParamPipe } from 'src/http/uuid-param.pipe';

@ApiTags('admin')
@RequiresCredential('admin')
@UseGuards(UndeclaredInputGuard)
@AnswersAfterAuditChain()
@Controller('api/v1/admin/accounts')
export class AdminAccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly endpoints: WebhookEndpointService,
  ) {}

  @Post()
  @RequiresPermission('accounts:write')
  @ApiOperation({ summary: 'Create an account; the response is the only time its secret is shown' })
  @ApiCreatedResponse({ type: CreatedAccountResponseDto })
  @ApiErrors(ApiError.validation('name', 'must not be blank'), ApiError.validation('webhook_url', INSECURE_REFUSED))
  async create(@Body() dto: CreateAccountDto): Promise<CreatedAccountResponseDto> {
    const { account, secret } = await this.accounts.create(dto.name, dto.webhook_url ?? null);
    return { ...toAccountResponse(account), webhook_secret: secret };
  }

  @Get(':id')
  @RequiresPermission('accounts:read')
  @ApiOperation({ summary: 'The account, without its secret, with its webhook endpoint' })
  @ApiOkResponse({ type: AdminAccountResponseDto })
  @ApiErrors(invalidId(), ApiError.notFound('account'))
  async get(@Param('id', UuidParamPipe) id: string): Promise<AdminAccountResponseDto> {
    const account = toAccountResponse(await this.accounts.get(id));
    return { ...account, webhook_endpoint: await this.endpoints.view(id) };
  }

  @Patch(':id')
  @RequiresPermission('accounts:write')
  @ApiOperation({ summary: 'Update name and/or webhook_url; null clears the URL' })
  @ApiOkResponse({ type: AccountResponseDto })
  @ApiErrors(
    ApiError.validation('webhook_url', 'must not contain user info'),
    invalidId(),
    ApiError.notFound('account'),
  )
  async update(@Param('id', UuidParamPipe) id: string, @Body() dto: UpdateAccountDto): Promise<AccountResponseDto> {
    return toAccountResponse(await this.endpoints.changeUrl(id, { name: dto.name, webhookUrl: dto.webhook_url }));
  }

  @Patch(':id/webhook-endpoint')
  @RequiresPermission('accounts:write')
  @ApiOperation({
    summary: "Change the account's webhook endpoint as its client can (url, status); a disable's reason is operator",
  })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiErrors(
    ApiError.validation('status', 'must be one of the following values: enabled, disabled'),
    invalidId(),
    ApiError.notFound('account'),
  )
  async updateEndpoint(
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointResponseDto> {
    await this.accounts.get(id);
    return this.endpoints.update(id, dto, 'operator');
  }

  @Post(':id/secret/rotate')
  @RequiresPermission('secrets:rotate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Issue a new secret; the old one keeps working for the grace period' })
  @ApiOkResponse({ type: RotatedSecretResponseDto })
  @ApiErrors(
    ApiError.validation('grace_period_seconds', 'must not be greater than 604800'),
    invalidId(),
    ApiError.notFound('account'),
  )
  async rotate(
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: RotateSecretDto,
  ): Promise<RotatedSecretResponseDto> {
    const rotated = await this.accounts.rotateSecret(id, dto.grace_period_seconds ?? 86_400);
    return { webhook_secret: rotated.secret, previous_secret_expires_at: iso(rotated.previousExpiresAt) };
  }
}
