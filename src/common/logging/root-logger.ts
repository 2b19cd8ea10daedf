import { createRedactor, createRootLogger, RootLogger, wantsPrettyLogs } from 'src/common/logging/logger';
import type { Redactor } from 'src/common/logging/redact';
import { loadConfig } from 'src/config/config.module';

let root: RootLogger | undefined;
let redactor: Redactor | undefined;

/** A request path is attacker-chosen text: it is logged redacted, then cut to this many characters. */
export const LOGGED_PATH_MAX = 64;

/** The one pino logger of the process, built from the validated configuration. */
export function rootLogger(): RootLogger {
  if (!root) {
    const config = loadConfig();
    root = createRootLogger(config, wantsPrettyLogs(config.nodeEnv, process.stdout.isTTY === true));
  }
  return root;
}

/** The path of a request as log lines show it: redacted, then clipped; the query string never. */
export function loggedPath(path: string): string {
  redactor ??= createRedactor(loadConfig());
  return redactor.clipped(path, LOGGED_PATH_MAX);
}
