import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from 'src/config/project-root';

/** What kyc_build_info says of the running process: the package version and the Node.js release. */
export interface BuildInfo {
  version: string;
  node_version: string;
}

/** The version of the package.json at `root` (`unknown` when it cannot be read), and this Node.js. */
export function buildInfo(root: string = projectRoot(), nodeVersion: string = process.version): BuildInfo {
  let version = 'unknown';
  try {
    const parsed = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
    if (typeof parsed.version === 'string' && parsed.version !== '') version = parsed.version;
  } catch {
    // No readable package.json: the series still says which Node.js runs.
  }
  return { version, node_version: nodeVersion };
}
