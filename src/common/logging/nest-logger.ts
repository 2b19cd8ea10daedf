import type { LoggerService } from '@nestjs/common';
import type { RootLogger } from 'src/common/logging/logger';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Nest's boot narration (one line per module and per route): debug; main.ts writes the one ready line. */
const BOOT_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Routes Nest's Logger (framework and our services) into the pino root logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: RootLogger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = params[params.length - 1];
    this.write(typeof context === 'string' && BOOT_CONTEXTS.has(context) ? 'debug' : 'info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const rest = [...params];
    // Nest's Logger appends the context name as the last argument.
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const fields: Record<string, unknown> = context ? { context } : {};
    const extra = rest.find((item) => typeof item === 'string') as string | undefined;
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, extra ?? message.message);
    } else if (message !== null && typeof message === 'object') {
      this.logger[level]({ ...fields, ...(message as Record<string, unknown>) }, extra);
    } else if (extra && /\n\s+at /.test(extra)) {
      this.logger[level]({ ...fields, stack: extra }, String(message));
    } else {
      this.logger[level](fields, extra ? `${String(message)} ${extra}` : String(message));
    }
  }
}
