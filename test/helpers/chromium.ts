import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const BROWSER_NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

export const CHROMIUM_MISSING =
  'no Chromium found (CHROMIUM_PATH is unset and none of chromium, chromium-browser, google-chrome is on PATH); ' +
  'install it with `apt-get install -y chromium` or set CHROMIUM_PATH';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** CHROMIUM_PATH, else the first Chromium-family browser on PATH; undefined when there is none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of BROWSER_NAMES) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** CI must not pass by skipping the browser test; `CI=false` or `CI=0` means not CI. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.CI) && env.CI !== 'false' && env.CI !== '0';
}

/**
 * Without a Chromium, registers in the calling `describe` what stands for the browser tests `titles`
 * of `suite`: one failing test in CI (which must never pass by skipping them), the tests skipped with
 * a warning elsewhere. True when the caller registers nothing else.
 */
export function withoutChromium(chromium: string | undefined, suite: string, titles: string[]): boolean {
  if (chromium) return false;
  if (inCi()) {
    it('has a Chromium to run in', () => {
      throw new Error(`CI must run the ${suite}: ${CHROMIUM_MISSING}`);
    });
  } else {
    console.warn(`\n!!! The ${suite} did NOT run (skipped): ${CHROMIUM_MISSING} !!!\n`);
    for (const title of titles) it.skip(title, () => undefined);
  }
  return true;
}
