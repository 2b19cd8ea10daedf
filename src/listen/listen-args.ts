import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as util from 'node:util';
import { isUuid } from 'src/common/uuid';

/** What kyc-listen runs with. */
export interface ListenOptions {
  baseUrl: string;
  secret: string;
  forwardTo: string;
  since?: string;
  /** Where the id of the last event forwarded is kept, so a restart resumes after it. */
  stateFile: string;
}

/** Bad arguments: one line naming the argument, exit 2. */
export class ListenUsageError extends Error {}

const OPTIONS = ['base-url', 'secret', 'forward-to', 'since', 'state-file'] as const;
const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ListenUsageError(`--${name} must be an absolute http or https URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ListenUsageError(`--${name} must be an absolute http or https URL`);
  }
  return value;
}

/** The default state file: one per service and account, named by a hash (the secret never touches the disk). */
export function defaultStateFile(baseUrl: string, secret: string, home = homedir()): string {
  const key = createHash('sha256').update(`${baseUrl}\n${secret}`).digest('hex').slice(0, 24);
  return join(home, '.kyc-listen', `${key}.json`);
}

/** Reads kyc-listen's command line; throws ListenUsageError naming the first bad argument. */
export function parseListenArgs(argv: string[], env: NodeJS.ProcessEnv): ListenOptions {
  const { tokens } = util.parseArgs({
    args: argv,
    options: Object.fromEntries(OPTIONS.map((name) => [name, { type: 'string' as const }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const given: Record<string, string> = {};
  for (const token of tokens) {
    if (token.kind === 'positional') throw new ListenUsageError(`unexpected argument ${token.value}`);
    if (token.kind === 'option-terminator') throw new ListenUsageError('unexpected argument --');
    if (token.kind !== 'option') continue;
    if (!(OPTIONS as readonly string[]).includes(token.name))
      throw new ListenUsageError(`unknown option ${token.rawName}`);
    if (token.name in given) throw new ListenUsageError(`--${token.name} given twice`);
    if (token.value === undefined || token.value === '') throw new ListenUsageError(`--${token.name} needs a value`);
    given[token.name] = token.value;
  }
  for (const name of ['base-url', 'forward-to'] as const) {
    if (given[name] === undefined) throw new ListenUsageError(`--${name} is required`);
  }
  const secret = given.secret ?? env.KYC_WEBHOOK_SECRET;
  if (!secret) throw new ListenUsageError('--secret is required (or KYC_WEBHOOK_SECRET)');
  if (!SECRET_SHAPE.test(secret)) throw new ListenUsageError('--secret must be the account secret, whsec_…');
  if (given.since !== undefined && !isUuid(given.since))
    throw new ListenUsageError('--since must be an event id (a UUID)');
  const baseUrl = httpUrl('base-url', given['base-url']).replace(/\/+$/, '');
  return {
    baseUrl,
    secret,
    forwardTo: httpUrl('forward-to', given['forward-to']),
    ...(given.since === undefined ? {} : { since: given.since.toLowerCase() }),
    stateFile: given['state-file'] ?? defaultStateFile(baseUrl, secret),
  };
}
