import type { AccountResponseDto } from 'src/accounts/accounts.dto';
import type { Account } from 'src/accounts/account.entity';
import { iso } from 'src/common/time';

export function toAccountResponse(account: Account): AccountResponseDto {
  return {
    id: account.id,
    object: 'account',
    name: account.name,
    webhook_url: account.webhookUrl,
    created_at: iso(account.createdAt),
  };
}
