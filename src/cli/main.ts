import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { CliUsageError, parseArgs, usage } from 'src/cli/cli-args';
import { runCommand } from 'src/cli/cli-commands';
import { CliModule } from 'src/cli/cli.module';
import { forTerminal } from 'src/cli/terminal-text';
import { ApiError } from 'src/common/api-error';
import { createRootLogger } from 'src/common/logging/logger';
import { NestPinoLogger } from 'src/common/logging/nest-logger';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';

/** All the CLI prints goes through here, so no stored text can send escape sequences to the terminal. */
function print(stream: NodeJS.WriteStream, text: string): void {
  stream.write(forTerminal(text));
}

/** One line on stderr: the option an argument came from, in the operator's spelling. */
function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const field = error.details[0]?.field;
    if (error.code === 'validation_failed' && field)
      return `--${field.replace(/_/g, '-')}: ${error.details[0].issue}`.replace(
        /^--(account-id|verification-id|key-id):/,
        '<$1>',
      );
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error;
    print(process.stderr, `error: ${error.message} (npm run cli -- --help)\n`);
    return 2;
  }
  if (parsed.kind === 'help') {
    print(process.stdout, usage(parsed.command));
    return 0;
  }
  const config = loadConfig();
  // stdout carries the command's answer only; the service's own log lines (warnings up) go to stderr.
  const quiet = config.logLevel === 'silent' || config.logLevel === 'fatal' || config.logLevel === 'error';
  const logger = createRootLogger(
    { ...config, logLevel: quiet ? config.logLevel : 'warn' },
    false,
    pino.destination({ fd: 2, sync: true }),
  );
  const app = await NestFactory.createApplicationContext(CliModule, {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
  });
  try {
    if (!app.get<DataSource>(getDataSourceToken()).isInitialized) {
      throw new Error(`PostgreSQL is unreachable at ${new URL(config.databaseUrl).host}`);
    }
    print(process.stdout, await runCommand(app, parsed.command, parsed.args, parsed.options));
    return 0;
  } catch (error) {
    print(process.stderr, `error: ${describe(error)}\n`);
    return 1;
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Everything is closed by now; this only guards against a client library keeping the loop alive.
    setTimeout(() => process.exit(code), 5_000).unref();
  },
  (error: unknown) => {
    print(process.stderr, error instanceof ConfigError ? `${error.message}\n` : `error: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
