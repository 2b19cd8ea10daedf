import { createRootLogger, RootLogger, wantsPrettyLogs } from 'src/common/logging/logger';
import { loadConfig } from 'src/config/config.module';

let root: RootLogger | undefined;

/** The one pino logger of the process, built from the validated configuration. */
export function rootLogger(): RootLogger {
  if (!root) {
    const config = loadConfig();
    root = createRootLogger(config, wantsPrettyLogs(config.nodeEnv, process.stdout.isTTY === true));
  }
  return root;
}
