/** The operations CLI's commands: their arguments, options and one-line summaries (cli-args.ts parses them). */

import { DEFAULT_LIMIT, MAX_LIMIT } from 'src/common/pagination';
import { ROLES } from 'src/http/actor';
import { DEFAULT_EXPIRES_IN_DAYS, MAX_EXPIRES_IN_DAYS } from 'src/operators/operator-key';

export type CommandName =
  | 'accounts:create'
  | 'accounts:rotate-secret'
  | 'audit verify'
  | 'deliveries:failed'
  | 'deliveries:replay'
  | 'operator-keys create'
  | 'operator-keys list'
  | 'operator-keys revoke'
  | 'redact'
  | 'reencrypt'
  | 'render-json'
  | 'retention';

export interface CommandSpec {
  positionals: readonly string[];
  /** Option name → placeholder; each takes one value. */
  options: Readonly<Record<string, string>>;
  /** Options that take no value (present or not). */
  flags?: readonly string[];
  required?: readonly string[];
  /** Options that must be whole numbers in [min, max]. */
  integers?: Readonly<Record<string, readonly [number, number]>>;
  exclusive?: readonly [string, readonly string[]];
  /** Options that must be UUIDs (every positional is an id, so it must be one too). */
  uuids?: readonly string[];
  /** Options whose value must be one of a list. */
  choices?: Readonly<Record<string, readonly string[]>>;
  /** A `[from, to]` pair of ISO 8601 options, from not after to. */
  timeRange?: readonly [string, string];
  /** Seals or reads webhook secrets: SECRET_ENCRYPTION_KEY is checked against the stored ones first. */
  secrets?: true;
  summary: string;
}

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  'accounts:create': {
    positionals: [],
    options: { name: '<name>', 'webhook-url': '<url>' },
    required: ['name'],
    secrets: true,
    summary: 'Create an account; prints it with its webhook secret (shown only this once)',
  },
  'accounts:rotate-secret': {
    positionals: ['<account-id>'],
    options: { 'grace-seconds': '<n>' },
    integers: { 'grace-seconds': [0, 604_800] },
    secrets: true,
    summary: 'Issue a new webhook secret; the old one keeps working for the grace period (default 86400 s)',
  },
  'audit verify': {
    positionals: [],
    options: {},
    summary:
      'Walk the audit trail from its anchor: exit 0 if the chain is intact, 1 naming the first missing or altered sequence',
  },
  'deliveries:failed': {
    positionals: ['<account-id>'],
    options: { limit: '<n>' },
    integers: { limit: [1, MAX_LIMIT] },
    summary: `List the account's failed webhook events, newest first (default limit ${DEFAULT_LIMIT})`,
  },
  'deliveries:replay': {
    positionals: ['<account-id>'],
    options: { event: '<event-id>', 'created-from': '<iso-time>', 'created-to': '<iso-time>' },
    exclusive: ['event', ['created-from', 'created-to']],
    uuids: ['event'],
    timeRange: ['created-from', 'created-to'],
    summary: 'Redeliver failed webhook events (one with --event, else all, optionally by creation time)',
  },
  'operator-keys create': {
    positionals: [],
    options: { name: '<name>', role: '<role>', 'expires-in-days': '<n>' },
    required: ['name', 'role'],
    choices: { role: ROLES },
    integers: { 'expires-in-days': [1, MAX_EXPIRES_IN_DAYS] },
    summary: `Issue an operator key with one role (${ROLES.join(', ')}), valid for --expires-in-days (default ${DEFAULT_EXPIRES_IN_DAYS}); prints it with the key (shown only this once)`,
  },
  'operator-keys list': {
    positionals: [],
    options: {},
    summary: 'List the operator keys, newest first, without the keys themselves',
  },
  'operator-keys revoke': {
    positionals: ['<key-id>'],
    options: {},
    summary: 'Revoke an operator key: every service process refuses it from then on',
  },
  redact: {
    positionals: ['<verification-id>'],
    options: {},
    summary:
      "Erase a verification's personal data everywhere it is kept (as the client's redact route does); prints it",
  },
  reencrypt: {
    positionals: [],
    options: { 'batch-size': '<n>' },
    integers: { 'batch-size': [1, 10_000] },
    secrets: true,
    summary:
      "Seal every stored webhook secret under SECRET_ENCRYPTION_KEY's first key (the last step of a key rotation; default batches of 500)",
  },
  'render-json': {
    positionals: [],
    options: { 'batch-size': '<n>' },
    integers: { 'batch-size': [1, 10_000] },
    summary:
      'Write the stored JSON text of verifications that have none (rows an older release wrote during an upgrade or after a roll back; default batches of 1000)',
  },
  retention: {
    positionals: [],
    options: {},
    flags: ['dry-run'],
    summary:
      'Run a retention pass now (PII_RETENTION_DAYS, WEBHOOK_EVENT_RETENTION_DAYS); --dry-run only counts what it would do',
  },
};
