import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export const PROMTOOL_MISSING =
  'no promtool found (PROMTOOL_PATH is unset and promtool is not on PATH nor in /usr/bin); ' +
  "install Debian's prometheus package (`apt-get install -y prometheus`) or set PROMTOOL_PATH";

/** PROMTOOL_PATH, else promtool on PATH (Debian's prometheus package puts it in /usr/bin). */
export function findPromtool(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PROMTOOL_PATH) return env.PROMTOOL_PATH;
  for (const dir of [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin']) {
    try {
      accessSync(join(dir, 'promtool'), constants.X_OK);
      return join(dir, 'promtool');
    } catch {
      // not here
    }
  }
  return undefined;
}
