import { parseArgs, type ParseArgsConfig } from 'node:util';

type FlagValue = string | boolean | (string | boolean)[] | undefined;

/** A bad command-line flag: the benchmark stops before it starts, with one line. */
export class FlagError extends Error {}

/** node's strict parseArgs (no positionals); a flag given twice is refused, not silently overridden. */
export function parseFlags<const T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    if (!(error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS_')) throw error;
    throw new FlagError((error as Error).message.replace(/\n/g, ' '), { cause: error });
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new FlagError(`--${token.name} given twice`);
    seen.add(token.name);
  }
  return parsed.values;
}

/** A flag that must be a positive integer; `fallback` when it is not given. */
export function positiveInteger(values: Record<string, FlagValue>, name: string, fallback: number): number {
  if (values[name] === undefined) return fallback;
  const parsed = Number(values[name]);
  if (!Number.isInteger(parsed) || parsed < 1) throw new FlagError(`--${name} needs a positive integer`);
  return parsed;
}

/** Repeatable `--env KEY=VALUE` flags (the value may hold "=" itself). */
export function envPairs(pairs: string[] = []): Record<string, string> {
  const bad = pairs.find((pair) => !/^[^=]+=/.test(pair));
  if (bad !== undefined) throw new FlagError(`--env needs KEY=VALUE, not "${bad}"`);
  return Object.fromEntries(pairs.map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
}

/** The options from process.argv, or exit code 2 with one line on stderr before anything is touched. */
export function readOptions<T>(bench: string, parse: (argv: string[]) => T): T {
  try {
    return parse(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`${bench}: ${error.message} (the options are listed in docs/performance.md)\n`);
    process.exit(2);
  }
}
