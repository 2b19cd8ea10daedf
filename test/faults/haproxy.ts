import { ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from '../helpers/test-app';
import { waitUntil } from './harness';

/**
 * Debian's HAProxy in front of API processes, with the configuration the project ships
 * (deploy/haproxy/haproxy.cfg): readiness checks on /health/ready, keep-alive on both sides, and
 * retries on another server of requests that were never processed.
 */

export const HAPROXY_MISSING =
  'no haproxy found (HAPROXY_PATH is unset and haproxy is neither on PATH nor in /usr/sbin); ' +
  'install it with `apt-get install -y haproxy` or set HAPROXY_PATH';

export function findHaproxy(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.HAPROXY_PATH) return env.HAPROXY_PATH;
  for (const dir of [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin']) {
    try {
      accessSync(join(dir, 'haproxy'), constants.X_OK);
      return join(dir, 'haproxy');
    } catch {
      // not here
    }
  }
  return undefined;
}

export const HAPROXY_CONFIG = join(__dirname, '..', '..', 'deploy', 'haproxy', 'haproxy.cfg');

/**
 * deploy/haproxy/haproxy.cfg as shipped, with the test's ports: the frontend bound on 127.0.0.1, the
 * server lines pointing at the test's API processes, and a stats page to read server states from.
 */
export function haproxyConfig(frontendPort: number, statsPort: number, serverPorts: readonly number[]): string {
  const shipped = readFileSync(HAPROXY_CONFIG, 'utf8');
  const servers = serverPorts.map((port, i) => `    server api${i + 1} 127.0.0.1:${port}`).join('\n');
  const config = shipped
    .replace(/^ {4}bind :8080$/m, `    bind 127.0.0.1:${frontendPort}`)
    .replace(/^ {4}server api1 .*\n {4}server api2 .*$/m, servers);
  if (!config.includes(`127.0.0.1:${frontendPort}`) || !config.includes(`127.0.0.1:${serverPorts[0]}`)) {
    throw new Error(`${HAPROXY_CONFIG} no longer has the bind and server lines this test replaces`);
  }
  return `${config}
listen stats
    bind 127.0.0.1:${statsPort}
    stats enable
    stats uri /stats
`;
}

export interface ServerStats {
  name: string;
  /** UP, DOWN, "UP 1/2", "DOWN 1/2", MAINT… */
  status: string;
  /** Requests HAProxy retried, and redispatched to another server, from this server. */
  retries: number;
  redispatches: number;
  /** Connection errors and response errors HAProxy saw on this server. */
  connectionErrors: number;
  responseErrors: number;
  sessions: number;
}

export interface Haproxy {
  url: string;
  process: ChildProcess;
  output: string[];
  servers(): Promise<ServerStats[]>;
  stop(): Promise<void>;
}

export async function startHaproxy(binary: string, serverPorts: readonly number[]): Promise<Haproxy> {
  const [frontendPort, statsPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'kyc-haproxy-'));
  const configPath = join(dir, 'haproxy.cfg');
  writeFileSync(configPath, haproxyConfig(frontendPort, statsPort, serverPorts));
  // -db: stay in the foreground, so the test owns the process and its PID.
  const child = spawn(binary, ['-db', '-f', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));

  const servers = async (): Promise<ServerStats[]> => {
    const res = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`);
    const [header, ...lines] = (await res.text()).trim().split('\n');
    const columns = header.replace(/^# /, '').split(',');
    const at = (row: string[], name: string): string => row[columns.indexOf(name)] ?? '';
    return lines
      .map((line) => line.split(','))
      .filter((row) => at(row, 'pxname') === 'kyc_api' && !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')))
      .map((row) => ({
        name: at(row, 'svname'),
        status: at(row, 'status'),
        retries: Number(at(row, 'wretr') || 0),
        redispatches: Number(at(row, 'wredis') || 0),
        connectionErrors: Number(at(row, 'econ') || 0),
        responseErrors: Number(at(row, 'eresp') || 0),
        sessions: Number(at(row, 'stot') || 0),
      }));
  };

  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output.join('')}`);
      return servers().then(
        (list) => list.length === serverPorts.length,
        () => false,
      );
    },
    10_000,
    'haproxy to answer its stats page',
    100,
  );

  return {
    url: `http://127.0.0.1:${frontendPort}`,
    process: child,
    output,
    servers,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
