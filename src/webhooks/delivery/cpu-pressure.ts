import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/**
 * How long runnable tasks have waited for a CPU, from Linux's pressure stall information: the `some`
 * line's `total` (microseconds during which at least one task was runnable and not running), read from
 * this process's own cgroup (v2) where it reports one, else from the whole machine's
 * (`/proc/pressure/cpu`). An event loop's lag tells a process only about its own queue; this is
 * what every other process on the CPUs waited, the api's requests among them (docs/performance.md).
 *
 * Written by hand: a file read and one number, for which no maintained package exists.
 */
export type CpuStall = () => number | undefined;

/** The `some` line's cumulative total, in microseconds; undefined if the text has none. */
export function parseSomeTotal(text: string): number | undefined {
  const match = /^some .*\btotal=(\d+)/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The files to try, own cgroup's first: `0::<path>` in /proc/self/cgroup names it under /sys/fs/cgroup. */
export function pressureFiles(selfCgroup: string | undefined): string[] {
  const path = selfCgroup === undefined ? undefined : /^0::(\/.*)$/m.exec(selfCgroup)?.[1];
  const own = path === undefined || path === '/' ? [] : [`/sys/fs/cgroup${path}/cpu.pressure`];
  return [...own, '/proc/pressure/cpu'];
}

/** A reader of the stall total, or undefined where the kernel reports none (not Linux, PSI off). */
export function cpuStallReader(): CpuStall | undefined {
  let selfCgroup: string | undefined;
  try {
    selfCgroup = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    selfCgroup = undefined;
  }
  for (const file of pressureFiles(selfCgroup)) {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      continue;
    }
    const buffer = Buffer.alloc(256);
    const read = (): number | undefined => {
      try {
        return parseSomeTotal(buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0)));
      } catch {
        return undefined;
      }
    };
    if (read() !== undefined) return read;
    closeSync(fd);
  }
  return undefined;
}
