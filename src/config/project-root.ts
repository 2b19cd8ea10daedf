import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The folder holding this package's package.json, found from this file (src/config in the sources,
 * dist/src/config when built): the same whatever folder the service or the CLI is started from.
 */
export function projectRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}
