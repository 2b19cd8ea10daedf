import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ConfigError, type Env, REQUIRED_SECRETS } from 'src/config/app-config';

type GeneratedName = (typeof REQUIRED_SECRETS)[number];

/**
 * Outside production, the three secrets are generated once and kept in a git-ignored file so that
 * restarts keep working (secrets encrypted under a lost key would be lost).
 */
export function resolveLocalSecrets(env: Env, file: string, warn: (line: string) => void): Env {
  const missing = REQUIRED_SECRETS.filter((name) => !env[name]);
  if (missing.length === 0) return env;
  if ((env.NODE_ENV ?? '') === 'production') {
    throw new ConfigError(missing[0], 'is required when NODE_ENV=production');
  }
  const stored: Partial<Record<GeneratedName, string>> = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Record<GeneratedName, string>>)
    : {};
  const created: GeneratedName[] = [];
  for (const name of missing) {
    if (stored[name]) continue;
    stored[name] = randomBytes(32).toString(name === 'SECRET_ENCRYPTION_KEY' ? 'base64' : 'base64url');
    created.push(name);
  }
  if (created.length > 0) {
    writeFileSync(file, JSON.stringify(stored, null, 2) + '\n', { mode: 0o600 });
    // Names only: a log keeps no secret, even a development one; the file (mode 0600) has the values.
    warn(
      `WARNING: generated ${created.join(', ')} for local development and saved them in ${file} (read them from there); set them explicitly in production.`,
    );
  }
  const resolved: Record<string, string | undefined> = { ...env };
  for (const name of missing) resolved[name] = stored[name];
  return resolved;
}
