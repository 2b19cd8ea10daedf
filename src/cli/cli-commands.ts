import type { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { DataSource } from 'typeorm';
import { toAccountResponse } from 'src/accounts/account.mapper';
import { CreateAccountDto } from 'src/accounts/accounts.dto';
import { AccountsService } from 'src/accounts/accounts.service';
import { SecretKeyVerifier } from 'src/accounts/secret-key-check';
import { SecretReencryption } from 'src/accounts/secret-reencryption';
import { AuditEventRepository } from 'src/audit/audit-event.repository';
import { verifyAuditChain } from 'src/audit/audit-verifier';
import type { CommandName } from 'src/cli/cli-args';
import { COMMANDS } from 'src/cli/cli-command-table';
import { ApiError } from 'src/common/api-error';
import { MAX_LIMIT } from 'src/common/pagination';
import { iso } from 'src/common/time';
import { isUuid } from 'src/common/uuid';
import { backfillVerificationJson } from 'src/verifications/verification-json-backfill';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { validationError } from 'src/http/validation';
import { RetentionService } from 'src/retention/retention.service';
import { toOperatorKeyResponse } from 'src/operators/operator-key.mapper';
import { CreateOperatorKeyDto } from 'src/operators/operator-keys.dto';
import { OperatorKeysService } from 'src/operators/operator-keys.service';
import type { WebhookEventResponseDto } from 'src/webhooks/event-log/webhook-events.dto';
import { MAX_BULK_REDELIVERY, WebhookEventsService } from 'src/webhooks/event-log/webhook-events.service';

type Options = Record<string, string>;

function uuidArgument(name: string, value: string): string {
  if (!isUuid(value)) throw ApiError.validation(name, 'must be a UUID');
  return value.toLowerCase();
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function failedTable(events: WebhookEventResponseDto[]): string {
  const header = ['EVENT', 'CREATED_AT', 'VERIFICATION', 'ATTEMPTS', 'LAST_ATTEMPT_AT', 'LAST_ERROR'];
  return table([
    header,
    ...events.map((event) => [
      event.id,
      event.created_at,
      event.verification_id,
      String(event.attempt_count),
      event.last_attempt_at ?? '-',
      event.last_error ?? '-',
    ]),
  ]);
}

/**
 * Each command is a thin call into the same services the HTTP API uses, so the rules (URL policy,
 * grace limits, replay semantics) live in one place. Returns what to print on stdout.
 */
export async function runCommand(
  app: INestApplicationContext,
  command: CommandName,
  args: string[],
  options: Options,
): Promise<string> {
  // As every service role does at start: a shell holding a retired key must not seal what the running service cannot open.
  if (COMMANDS[command].secrets) await app.get(SecretKeyVerifier).assertOpensStored();
  const accounts = app.get(AccountsService);
  const events = app.get(WebhookEventsService);
  switch (command) {
    case 'accounts:create': {
      const dto = plainToInstance(CreateAccountDto, {
        name: options.name,
        webhook_url: options['webhook-url'] ?? null,
      });
      const errors = validateSync(dto);
      if (errors.length > 0) throw validationError(errors);
      const { account, secret } = await accounts.create(dto.name, dto.webhook_url ?? null);
      return json({ ...toAccountResponse(account), webhook_secret: secret });
    }
    case 'accounts:rotate-secret': {
      const grace = options['grace-seconds'] === undefined ? 86_400 : Number(options['grace-seconds']);
      const rotated = await accounts.rotateSecret(uuidArgument('account_id', args[0]), grace);
      return json({ webhook_secret: rotated.secret, previous_secret_expires_at: iso(rotated.previousExpiresAt) });
    }
    case 'audit verify':
      return verifyAuditChain(app.get(AuditEventRepository));
    case 'deliveries:failed': {
      const accountId = uuidArgument('account_id', args[0]);
      await accounts.get(accountId);
      const page = await events.list(accountId, { delivery_status: 'failed', limit: options.limit });
      if (page.data.length === 0) return `No failed webhook events for account ${accountId}.\n`;
      const more = page.has_more ? ` (more exist: raise --limit, up to ${MAX_LIMIT}, or use the delivery-log API)` : '';
      return `${page.data.length} failed webhook event(s), newest first${more}:\n${failedTable(page.data)}`;
    }
    case 'deliveries:replay': {
      const accountId = uuidArgument('account_id', args[0]);
      await accounts.get(accountId);
      if (options.event !== undefined) {
        const event = await events.redeliver(accountId, uuidArgument('event', options.event));
        return `Event ${event.id} queued for redelivery (a fresh retry cycle, same webhook-id).\n`;
      }
      const result = await events.redeliverMany(accountId, {
        delivery_status: 'failed',
        created_from: options['created-from'],
        created_to: options['created-to'],
      });
      const rest =
        result.count === MAX_BULK_REDELIVERY ? ' That is the most one call replays: run it again for the rest.' : '';
      return `${result.count} failed event(s) of account ${accountId} queued for redelivery.${rest}\n`;
    }
    case 'operator-keys create': {
      const dto = plainToInstance(CreateOperatorKeyDto, {
        name: options.name,
        role: options.role,
        expires_in_days: options['expires-in-days'] === undefined ? undefined : Number(options['expires-in-days']),
      });
      const errors = validateSync(dto);
      if (errors.length > 0) throw validationError(errors);
      const { record, key } = await app.get(OperatorKeysService).create(dto.name, dto.role, dto.expires_in_days);
      return json({ ...toOperatorKeyResponse(record), key });
    }
    case 'operator-keys list': {
      const keys = await app.get(OperatorKeysService).list();
      if (keys.length === 0) return 'No operator keys.\n';
      const rows = keys.map(toOperatorKeyResponse).map((key) => {
        const state = key.revoked_at ? 'revoked' : Date.parse(key.expires_at) <= Date.now() ? 'expired' : 'active';
        return [key.id, key.name, key.role, state, key.created_at, key.expires_at, key.last_used_at ?? '-'];
      });
      return table([['ID', 'NAME', 'ROLE', 'STATE', 'CREATED_AT', 'EXPIRES_AT', 'LAST_USED_AT'], ...rows]);
    }
    case 'operator-keys revoke': {
      const id = uuidArgument('key_id', args[0]);
      await app.get(OperatorKeysService).revoke(id);
      return `Operator key ${id} revoked: every service process refuses it from now on.\n`;
    }
    case 'redact': {
      const redacted = await app.get(VerificationRedactor).redact(null, uuidArgument('verification_id', args[0]));
      return json(redacted);
    }
    case 'reencrypt': {
      const counts = await app.get(SecretReencryption).run(Number(options['batch-size'] ?? 500));
      const done = `Re-encrypted ${counts.reencrypted} secret(s) under key ${counts.keyId} in ${counts.batches} batch(es).\n`;
      if (counts.undecryptable.length === 0) return `${done}Every stored secret is now sealed by that key.\n`;
      throw new Error(
        `${done.trim()} ${counts.undecryptable.length} secret(s) no key of SECRET_ENCRYPTION_KEY decrypts were left as they are ` +
          `(secret ids: ${counts.undecryptable.slice(0, 10).join(', ')}${counts.undecryptable.length > 10 ? ', …' : ''}); ` +
          'add the key they were sealed with and run it again',
      );
    }
    case 'render-json': {
      const counts = await backfillVerificationJson(
        app.get<DataSource>(getDataSourceToken()),
        Number(options['batch-size'] ?? 1_000),
      );
      return `Wrote the stored JSON of ${counts.rows} verification(s) in ${counts.batches} batch(es).\n`;
    }
    case 'retention': {
      const retention = app.get(RetentionService);
      const policy = `Policy: ${retention.describe()}.\n`;
      if (options['dry-run'] !== undefined) {
        const counts = await retention.preview();
        return (
          policy +
          `Dry run, nothing changed: a pass now would redact ${counts.verifications} verification(s) ` +
          `and delete ${counts.webhookEvents} delivered or failed webhook event(s) (pending events are never deleted).\n`
        );
      }
      const counts = await retention.run();
      return (
        policy +
        `Redacted ${counts.verifications} verification(s); deleted ${counts.webhookEvents} webhook event(s). ` +
        `Their verification.redacted events go out from the workers, each account's in turn.\n`
      );
    }
  }
}
