import { join } from 'node:path';
import { BenchProcess, startProcess } from '../common/processes';

/** A server process under test: the real service or the floor. */
export type Target = BenchProcess;

const ROOT = join(__dirname, '..', '..');
export const SERVICE_MAIN = join(ROOT, 'src', 'main.js');
export const FLOOR_MAIN = join(__dirname, 'floor-server.js');
export const NEST_FLOOR_MAIN = join(__dirname, 'nest-floor.js');
export const ROUND_TRIP_FLOOR_MAIN = join(__dirname, 'round-trip-floor.js');

/** Starts `script` with `env` and waits until `probePath` answers with anything at all. */
export async function startTarget(
  name: string,
  script: string,
  env: Record<string, string>,
  probePath: string,
): Promise<Target> {
  return startProcess(name, script, env, {
    portVariables: ['PORT', 'FLOOR_PORT'],
    ready: async (url) => {
      await fetch(`${url}${probePath}`);
      return true;
    },
    stopGraceMs: 5_000,
  });
}
