import { CliUsageError, parseArgs, usage } from 'src/cli/cli-args';

const ID = '0193a6f2-0000-7000-8000-000000000000';

describe('parseArgs', () => {
  it('shows the overview for no command, help, --help and -h', () => {
    for (const argv of [[], ['help'], ['--help'], ['-h']]) expect(parseArgs(argv)).toEqual({ kind: 'help' });
  });

  it("shows a command's usage for --help after it, whatever else is given", () => {
    expect(parseArgs(['deliveries:replay', '--bogus', '--help'])).toEqual({
      kind: 'help',
      command: 'deliveries:replay',
    });
  });

  it('reads options as "--name value" and "--name=value"', () => {
    expect(parseArgs(['accounts:create', '--name', 'Acme Bank', '--webhook-url=https://acme.example/h?a=b'])).toEqual({
      kind: 'run',
      command: 'accounts:create',
      args: [],
      options: { name: 'Acme Bank', 'webhook-url': 'https://acme.example/h?a=b' },
    });
  });

  it('takes the positional account id', () => {
    expect(parseArgs(['deliveries:failed', ID, '--limit', '5'])).toEqual({
      kind: 'run',
      command: 'deliveries:failed',
      args: [ID],
      options: { limit: '5' },
    });
    expect(parseArgs(['deliveries:replay', ID, '--created-from', '2026-01-01T00:00:00Z'])).toMatchObject({
      options: { 'created-from': '2026-01-01T00:00:00Z' },
    });
  });

  it.each([
    [['nope'], 'unknown command "nope"'],
    [['accounts:create'], 'accounts:create: --name <name> is required'],
    [['accounts:create', '--name'], 'accounts:create: --name needs a value <name>'],
    [['accounts:create', '--name', '--webhook-url', 'x'], 'accounts:create: --name needs a value <name>'],
    [['accounts:create', '--name', 'a', '--name', 'b'], 'accounts:create: --name given twice'],
    [['accounts:create', '--name', 'a', '--colour', 'b'], 'accounts:create: unknown option --colour'],
    [['accounts:create', 'extra', '--name', 'a'], 'accounts:create: unexpected argument "extra"'],
    [['accounts:rotate-secret'], 'accounts:rotate-secret: missing <account-id>'],
    [
      ['accounts:rotate-secret', ID, '--grace-seconds', '604801'],
      'accounts:rotate-secret: --grace-seconds must be an integer between 0 and 604800',
    ],
    [
      ['accounts:rotate-secret', ID, '--grace-seconds', '-1'],
      'accounts:rotate-secret: --grace-seconds must be an integer between 0 and 604800',
    ],
    [['deliveries:failed', ID, '--limit', '0'], 'deliveries:failed: --limit must be an integer between 1 and 100'],
    [['deliveries:failed', ID, '--limit', '1.5'], 'deliveries:failed: --limit must be an integer between 1 and 100'],
    [
      ['deliveries:replay', ID, '--event', ID, '--created-to', '2026-01-01'],
      'deliveries:replay: --event cannot be combined with --created-to',
    ],
    [['deliveries:replay', ID, ID], `deliveries:replay: unexpected argument "${ID}"`],
    [['redact'], 'redact: missing <verification-id>'],
    [['redact', ID, ID], `redact: unexpected argument "${ID}"`],
    [['redact', ID, '--dry-run'], 'redact: unknown option --dry-run'],
    [['retention', ID], `retention: unexpected argument "${ID}"`],
    [['retention', '--dry-run=x'], 'retention: --dry-run takes no value'],
    [['retention', '--dry-run='], 'retention: --dry-run takes no value'],
    [['retention', '--dry-run', '--dry-run'], 'retention: --dry-run given twice'],
    [['retention', '--dry-run', 'false'], 'retention: unexpected argument "false"'],
    [['retention', '--dry'], 'retention: unknown option --dry'],
    [['retention', '--force'], 'retention: unknown option --force'],
    [['retention', '--', '--dry-run'], 'retention: unknown option --'],
    // malformed values: usage errors too, found before any database work
    [['deliveries:failed', 'not-a-uuid'], 'deliveries:failed: <account-id> must be a UUID'],
    [['accounts:rotate-secret', `${ID}0`], 'accounts:rotate-secret: <account-id> must be a UUID'],
    [['redact', 'x'], 'redact: <verification-id> must be a UUID'],
    [['deliveries:replay', ID, '--event', 'e1'], 'deliveries:replay: --event must be a UUID'],
    [
      ['deliveries:replay', ID, '--created-from', 'yesterday'],
      'deliveries:replay: --created-from must be an ISO 8601 date-time',
    ],
    [
      ['deliveries:replay', ID, '--created-to', '2026-02-30'],
      'deliveries:replay: --created-to must be an ISO 8601 date-time',
    ],
    [
      ['deliveries:replay', ID, '--created-from', '2026-02-01', '--created-to', '2026-01-01'],
      'deliveries:replay: --created-from must not be after --created-to',
    ],
    [
      ['accounts:create', '--name', 'Evil\u001B[31m'],
      'accounts:create: --name must not contain control characters (U+0000-U+001F, U+007F-U+009F)',
    ],
    [
      ['accounts:create', '--name', 'a', '--webhook-url', 'https://a.example/\n'],
      'accounts:create: --webhook-url must not contain control characters (U+0000-U+001F, U+007F-U+009F)',
    ],
  ])('refuses %j with one line', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(new CliUsageError(message));
  });
});

describe('parseArgs: values', () => {
  it('accepts UUIDs in either case and ISO 8601 bounds in order', () => {
    expect(parseArgs(['redact', ID.toUpperCase()])).toMatchObject({ args: [ID.toUpperCase()] });
    expect(
      parseArgs(['deliveries:replay', ID, '--created-from', '2026-01-01', '--created-to', '2026-01-01T00:00:00.000Z']),
    ).toMatchObject({ options: { 'created-from': '2026-01-01', 'created-to': '2026-01-01T00:00:00.000Z' } });
    expect(parseArgs(['accounts:create', '--name', 'Zoë 😀 שלום'])).toMatchObject({ options: { name: 'Zoë 😀 שלום' } });
  });
});

describe('parseArgs: redact and retention', () => {
  it('redact takes the verification id and no option', () => {
    expect(parseArgs(['redact', ID])).toEqual({ kind: 'run', command: 'redact', args: [ID], options: {} });
  });

  it('retention takes no argument; --dry-run is a flag without a value', () => {
    expect(parseArgs(['retention'])).toEqual({ kind: 'run', command: 'retention', args: [], options: {} });
    expect(parseArgs(['retention', '--dry-run'])).toEqual({
      kind: 'run',
      command: 'retention',
      args: [],
      options: { 'dry-run': 'true' },
    });
  });

  it('shows their usage for --help, even after a flag', () => {
    expect(parseArgs(['redact', '--help'])).toEqual({ kind: 'help', command: 'redact' });
    expect(parseArgs(['retention', '--dry-run', '-h'])).toEqual({ kind: 'help', command: 'retention' });
  });
});

describe('parseArgs: operator-keys', () => {
  it('reads the two-word commands', () => {
    expect(parseArgs(['operator-keys', 'create', '--name', 'ci', '--role', 'viewer'])).toEqual({
      kind: 'run',
      command: 'operator-keys create',
      args: [],
      options: { name: 'ci', role: 'viewer' },
    });
    expect(parseArgs(['operator-keys', 'list'])).toMatchObject({ command: 'operator-keys list', args: [] });
    expect(parseArgs(['operator-keys', 'revoke', ID])).toMatchObject({ command: 'operator-keys revoke', args: [ID] });
    expect(parseArgs(['operator-keys', 'create', '--help'])).toEqual({ kind: 'help', command: 'operator-keys create' });
  });

  it.each([
    [['operator-keys'], 'operator-keys: expected one of create, list, revoke'],
    [['operator-keys', 'rotate'], 'operator-keys: expected one of create, list, revoke'],
    [['operator-keys', 'create', '--name', 'ci'], 'operator-keys create: --role <role> is required'],
    [
      ['operator-keys', 'create', '--name', 'ci', '--role', 'root'],
      'operator-keys create: --role must be one of viewer, operator, compliance, auditor, admin',
    ],
    [
      ['operator-keys', 'create', '--name', 'ci', '--role', 'admin', '--expires-in-days', '366'],
      'operator-keys create: --expires-in-days must be an integer between 1 and 365',
    ],
    [
      ['operator-keys', 'create', '--name', 'ci', '--role', 'admin', '--expires-in-days', '0'],
      'operator-keys create: --expires-in-days must be an integer between 1 and 365',
    ],
    [['operator-keys', 'revoke'], 'operator-keys revoke: missing <key-id>'],
    [['operator-keys', 'revoke', 'x'], 'operator-keys revoke: <key-id> must be a UUID'],
    [['operator-keys', 'list', '--all'], 'operator-keys list: unknown option --all'],
  ])('refuses %j with one line', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(new CliUsageError(message));
  });
});

describe('usage', () => {
  it('lists every command with its synopsis', () => {
    const text = usage();
    expect(text).toContain('accounts:create --name <name> [--webhook-url <url>]');
    expect(text).toContain('accounts:rotate-secret <account-id> [--grace-seconds <n>]');
    expect(text).toContain('deliveries:failed <account-id> [--limit <n>]');
    expect(text).toContain(
      'deliveries:replay <account-id> [--event <event-id>] [--created-from <iso-time>] [--created-to <iso-time>]',
    );
    expect(text).toContain('  redact <verification-id>\n');
    expect(text).toContain('  retention [--dry-run]\n');
  });

  it('shows a flag as an option without a value', () => {
    expect(usage('retention')).toMatch(/^Usage: npm run cli -- retention \[--dry-run\]\n\n.*--dry-run only counts/);
    expect(usage('redact')).toMatch(/^Usage: npm run cli -- redact <verification-id>\n/);
  });

  it("gives one command's usage", () => {
    expect(usage('deliveries:failed')).toMatch(
      /^Usage: npm run cli -- deliveries:failed <account-id> \[--limit <n>\]\n/,
    );
  });
});

describe('two-word commands', () => {
  it('reads `audit verify` as one command', () => {
    expect(parseArgs(['audit', 'verify'])).toEqual({ kind: 'run', command: 'audit verify', args: [], options: {} });
    expect(() => parseArgs(['audit'])).toThrow('audit: expected one of verify');
  });
});
