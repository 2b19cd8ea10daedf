import { Global, Module } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig, parseConfig } from 'src/config/app-config';
import { resolveLocalSecrets } from 'src/config/local-secrets';
import { projectRoot } from 'src/config/project-root';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Generated local secrets live at the project root, so every start and the CLI find the same file. */
export const LOCAL_SECRETS_FILE = join(projectRoot(), '.local-secrets.json');

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
