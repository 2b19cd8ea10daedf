import { AccountSecret } from 'src/accounts/account-secret.entity';
import { Account } from 'src/accounts/account.entity';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import { Verification } from 'src/verifications/verification.entity';
import { WebhookAttempt } from 'src/webhooks/webhook-attempt.entity';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';

export const ENTITIES = [Account, AccountSecret, Verification, VerificationStatusHistory, WebhookEvent, WebhookAttempt];
