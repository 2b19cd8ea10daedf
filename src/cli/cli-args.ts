/** The operations CLI's grammar: commands, their arguments and options. No Nest here, so it is unit-tested. */

import * as util from 'node:util';
import { ApiError } from 'src/common/api-error';
import { COMMANDS, type CommandName, type CommandSpec } from 'src/cli/cli-command-table';
import { checkRange, parseTimestamp } from 'src/common/timestamps';
import { textIssue } from 'src/http/unsafe-input';
import { isUuid } from 'src/common/uuid';

export type { CommandName } from 'src/cli/cli-command-table';

export type ParsedArgs =
  | { kind: 'help'; command?: CommandName }
  | { kind: 'run'; command: CommandName; args: string[]; options: Record<string, string> };

/** Bad arguments: one line for the operator, exit code 2. */
export class CliUsageError extends Error {}

function isCommand(name: string): name is CommandName {
  return Object.prototype.hasOwnProperty.call(COMMANDS, name);
}

/** The arguments and options after the command, refused in this grammar's one-line words. */
function readOptions(
  command: CommandName,
  spec: CommandSpec,
  argv: string[],
): { args: string[]; options: Record<string, string> } {
  const flags = spec.flags ?? [];
  const types = Object.fromEntries([
    ...Object.keys(spec.options).map((name) => [name, { type: 'string' as const }]),
    ...flags.map((name) => [name, { type: 'boolean' as const }]),
  ]);
  // Tokens, not strict mode: strict calls "--grace-seconds -1" ambiguous, in its own words, before the range check.
  const { tokens } = util.parseArgs({
    args: argv,
    options: types,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const args: string[] = [];
  const options: Record<string, string> = {};
  tokens.forEach((token, i) => {
    if (token.kind === 'option-terminator') throw new CliUsageError(`${command}: unknown option --`);
    if (token.kind === 'positional') args.push(token.value);
    else if (!token.rawName.startsWith('--')) {
      // A word with one dash is an argument here; node splits "-ab" into one token per letter.
      if (tokens[i - 1]?.index !== token.index) args.push(argv[token.index]);
    } else {
      const { name, value } = token;
      const isFlag = flags.includes(name);
      if (!isFlag && !Object.prototype.hasOwnProperty.call(spec.options, name))
        throw new CliUsageError(`${command}: unknown option --${name}`);
      if (name in options) throw new CliUsageError(`${command}: --${name} given twice`);
      if (isFlag) {
        if (token.inlineValue) throw new CliUsageError(`${command}: --${name} takes no value`);
        options[name] = 'true';
        return;
      }
      if (value === undefined || (!token.inlineValue && value.startsWith('--')))
        throw new CliUsageError(`${command}: --${name} needs a value ${spec.options[name]}`);
      options[name] = value;
    }
  });
  return { args, options };
}

/** The values' shapes, so that a malformed one is a usage error before any database work. */
function checkValues(command: CommandName, spec: CommandSpec, args: string[], options: Record<string, string>): void {
  const given: [string, string][] = [
    ...args.map((value, i): [string, string] => [spec.positionals[i], value]),
    ...Object.entries(options).map(([name, value]): [string, string] => [`--${name}`, value]),
  ];
  for (const [name, value] of given) {
    const issue = textIssue(value);
    if (issue) throw new CliUsageError(`${command}: ${name} ${issue}`);
  }
  args.forEach((value, i) => {
    if (!isUuid(value)) throw new CliUsageError(`${command}: ${spec.positionals[i]} must be a UUID`);
  });
  for (const name of spec.uuids ?? []) {
    if (name in options && !isUuid(options[name])) throw new CliUsageError(`${command}: --${name} must be a UUID`);
  }
  if (spec.timeRange) {
    const [from, to] = spec.timeRange;
    try {
      const bounds = [from, to].map((name) =>
        name in options ? parseTimestamp(`--${name}`, options[name]) : undefined,
      );
      checkRange(`--${from}`, bounds[0], `--${to}`, bounds[1]);
    } catch (error) {
      if (error instanceof ApiError) throw new CliUsageError(`${command}: ${error.message}`);
      throw error;
    }
  }
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const [word, ...words] = argv;
  if (word === undefined || word === '--help' || word === '-h' || word === 'help') return { kind: 'help' };
  // A command of two words (`operator-keys create`) is read as one.
  const twoWords = words.length > 0 && isCommand(`${word} ${words[0]}`);
  const first = twoWords ? `${word} ${words[0]}` : word;
  const rest = twoWords ? words.slice(1) : words;
  if (!isCommand(first)) {
    const subcommands = Object.keys(COMMANDS)
      .filter((name) => name.startsWith(`${word} `))
      .map((name) => name.slice(word.length + 1));
    if (subcommands.length > 0) throw new CliUsageError(`${word}: expected one of ${subcommands.join(', ')}`);
    throw new CliUsageError(`unknown command "${first}"`);
  }
  const spec = COMMANDS[first];
  if (rest.includes('--help') || rest.includes('-h')) return { kind: 'help', command: first };

  const { args, options } = readOptions(first, spec, rest);
  if (args.length < spec.positionals.length)
    throw new CliUsageError(`${first}: missing ${spec.positionals[args.length]}`);
  if (args.length > spec.positionals.length)
    throw new CliUsageError(`${first}: unexpected argument "${args[spec.positionals.length]}"`);
  for (const name of spec.required ?? []) {
    if (!(name in options)) throw new CliUsageError(`${first}: --${name} ${spec.options[name]} is required`);
  }
  for (const [name, [min, max]] of Object.entries(spec.integers ?? {})) {
    const value = options[name];
    if (value !== undefined && (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)) {
      throw new CliUsageError(`${first}: --${name} must be an integer between ${min} and ${max}`);
    }
  }
  for (const [name, allowed] of Object.entries(spec.choices ?? {})) {
    const value = options[name];
    if (value !== undefined && !allowed.includes(value)) {
      throw new CliUsageError(`${first}: --${name} must be one of ${allowed.join(', ')}`);
    }
  }
  checkValues(first, spec, args, options);
  if (spec.exclusive) {
    const [one, others] = spec.exclusive;
    const clash = others.find((other) => other in options);
    if (one in options && clash) throw new CliUsageError(`${first}: --${one} cannot be combined with --${clash}`);
  }
  return { kind: 'run', command: first, args, options };
}

function synopsis(name: CommandName): string {
  const spec = COMMANDS[name];
  const options = [
    ...Object.entries(spec.options).map(([option, value]) =>
      spec.required?.includes(option) ? `--${option} ${value}` : `[--${option} ${value}]`,
    ),
    ...(spec.flags ?? []).map((flag) => `[--${flag}]`),
  ];
  return [name, ...spec.positionals, ...options].join(' ');
}

export function usage(command?: CommandName): string {
  if (command) return `Usage: npm run cli -- ${synopsis(command)}\n\n${COMMANDS[command].summary}\n`;
  const lines = (Object.keys(COMMANDS) as CommandName[]).map(
    (name) => `  ${synopsis(name)}\n      ${COMMANDS[name].summary}`,
  );
  return [
    'Usage: npm run cli -- <command> [arguments] [options]',
    '',
    'Operations commands against the configured database (DATABASE_URL, REDIS_URL, SECRET_ENCRYPTION_KEY...).',
    'They start neither the HTTP server nor the delivery worker; replayed events are queued for the workers.',
    '',
    'Commands:',
    ...lines,
    '',
    'Options take a value as "--option value" or "--option=value"; --help after a command shows its usage.',
    '',
  ].join('\n');
}
