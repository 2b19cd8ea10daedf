import { Global, Module } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig, parseConfig, resolveLocalSecrets } from 'src/config/app-config';

export const APP_CONFIG = Symbol('APP_CONFIG');

export const LOCAL_SECRETS_FILE = join(process.cwd(), '.local-secrets.json');

let cached: AppConfig | undefined;

/** The one place that reads process.env. Throws ConfigError naming the first bad variable. */
export function loadConfig(): AppConfig {
  cached ??= parseConfig(
    resolveLocalSecrets(process.env, LOCAL_SECRETS_FILE, (line) => process.stderr.write(line + '\n')),
  );
  return cached;
}

@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: loadConfig }],
  exports: [APP_CONFIG],
})
export class ConfigModule {}
