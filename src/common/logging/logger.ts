import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import { logContextFields } from 'src/common/logging/log-context';
import { Redactor } from 'src/common/logging/redact';
import type { AppConfig } from 'src/config/app-config';

export type RootLogger = Logger;

type LoggerSettings = Pick<
  AppConfig,
  'logLevel' | 'nodeEnv' | 'adminToken' | 'internalApiToken' | 'secretEncryptionKeys'
>;

/**
 * The process logger: JSON lines, each carrying the current request's id (and account id once
 * authenticated); secrets are removed by key, by shape, and as literal values, on every line.
 */
export function createRootLogger(config: LoggerSettings, pretty = false, destination?: DestinationStream): RootLogger {
  const redactor = createRedactor(config);
  const options: LoggerOptions = {
    level: config.logLevel,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    messageKey: 'msg',
    // A key the line itself gives (the access line's request_id) wins over the context's.
    mixin: () => logContextFields(),
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => redactor.value(object) as Record<string, unknown>,
    },
    hooks: {
      // The last line of defence: whatever reached the serialized line, secret shapes leave it.
      streamWrite: (line) => redactor.text(line),
    },
  };
  if (pretty) {
    options.transport = { target: 'pino-pretty', options: { colorize: true, singleLine: true } };
  }
  return destination ? pino(options, destination) : pino(options);
}

/** Redacts the configured tokens as literals, besides every secret shape. */
export function createRedactor(config: Omit<LoggerSettings, 'logLevel' | 'nodeEnv'>): Redactor {
  return new Redactor([
    config.adminToken,
    config.internalApiToken,
    ...config.secretEncryptionKeys.map((key) => key.toString('base64')),
  ]);
}

/** Pretty output only for a developer watching a terminal; pino-pretty is a dev dependency. */
export function wantsPrettyLogs(nodeEnv: string, isTty: boolean): boolean {
  if (nodeEnv !== 'development' || !isTty) return false;
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
