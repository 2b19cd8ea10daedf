import { ApiProperty } from '@nestjs/swagger';
import { AccountResponseDto } from 'src/accounts/accounts.dto';
import { WebhookEndpointResponseDto } from 'src/webhooks/endpoint/webhook-endpoint.dto';

/** The admin read of an account: the account, and its webhook endpoint as its client sees it. */
export class AdminAccountResponseDto extends AccountResponseDto {
  @ApiProperty({ type: WebhookEndpointResponseDto }) webhook_endpoint!: WebhookEndpointResponseDto;
}
