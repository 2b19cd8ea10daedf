import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Integers = Record<string, number>;

/** A bad command-line flag: the benchmark stops before it starts, with one line. */
export class FlagError extends Error {}

/**
 * node's strict parseArgs (no positionals) of `options`, plus one flag per key of `integers` that must
 * be a positive integer (that value when not given); a flag given twice is refused, not silently overridden.
 */
export function parseFlags<const T extends Options, N extends Integers>(argv: string[], options: T, integers: N) {
  const names = Object.keys(integers);
  const all: Options = { ...options, ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: all, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    if (!(error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS_')) throw error;
    throw new FlagError((error as Error).message.replace(/\n/g, ' '), { cause: error });
  }
  const given = parsed.tokens.flatMap((t) => (t.kind === 'option' && !all[t.name]?.multiple ? [t.name] : []));
  const twice = given.find((name, i) => given.indexOf(name) !== i);
  if (twice) throw new FlagError(`--${twice} given twice`);
  const values = parsed.values as Record<string, unknown>;
  for (const name of names) {
    const value = values[name] === undefined ? integers[name] : Number(values[name]);
    if (!Number.isInteger(value) || (value as number) < 1) throw new FlagError(`--${name} needs a positive integer`);
    values[name] = value;
  }
  return values as ReturnType<typeof parseArgs<{ options: T; strict: true }>>['values'] & { [K in keyof N]: number };
}

/** The flags of interleaved slices (slices.ts) and their defaults, with the seconds of one slice from them. */
export const SLICE_FLAGS = { duration: 15, slices: 5, warmup: 3 };
export const withSliceSeconds = <T extends { duration: number; slices: number }>(values: T) =>
  Object.assign(values, { sliceSeconds: Math.max(1, Math.round(values.duration / values.slices)) });

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
