import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Six ports whose cluster-bus ports (port + 10000) are free too. */
async function clusterPorts(count: number): Promise<number[]> {
  for (let tries = 0; tries < 50; tries += 1) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const free = await Promise.all(ports.flatMap((port) => [portFree(port), portFree(port + 10_000)]));
    if (free.every(Boolean)) return ports;
  }
  throw new Error('no free ports for a Redis Cluster');
}

export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 });
  return stdout;
}

/** A throw-away six-node Redis Cluster (3 primaries, 1 replica each), each node in its own tmp dir. */
export class RedisClusterUnderTest {
  private readonly nodes = new Map<number, { child: ChildProcess; dir: string }>();

  private alive(port: number): boolean {
    const child = this.nodes.get(port)?.child;
    return !!child && child.exitCode === null && child.signalCode === null;
  }
  ports: number[] = [];

  get nodesVariable(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  async start(): Promise<void> {
    this.ports = await clusterPorts(6);
    for (const port of this.ports) {
      const dir = mkdtempSync(join(tmpdir(), `kyc-cluster-${port}-`));
      const child = spawn(
        'redis-server',
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)],
          ...['--cluster-node-timeout', '2000', '--appendonly', 'no', '--save', ''],
          // A replica whose link to its primary was down for more than 10 node time-outs (20 s) never
          // stands for election, and the cluster never fails over: the likeliest reason for a CI run's
          // "did not fail over within 60 s" on a loaded machine. 0 lets it always try.
          ...['--cluster-replica-validity-factor', '0'],
        ],
        { stdio: 'ignore' },
      );
      this.nodes.set(port, { child, dir });
    }
    await this.until(async () => (await Promise.all(this.ports.map((p) => this.pings(p)))).every(Boolean), 'nodes');
    const addresses = this.ports.map((port) => `127.0.0.1:${port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
      timeout: 30_000,
    });
    await this.until(() => this.stateOk(), 'cluster_state:ok');
  }

  private async pings(port: number): Promise<boolean> {
    return (await redisCli(port, 'PING').catch(() => '')).trim() === 'PONG';
  }

  /** cluster_state:ok as every surviving node sees it. */
  async stateOk(): Promise<boolean> {
    const live = this.ports.filter((port) => this.alive(port));
    const infos = await Promise.all(live.map((port) => redisCli(port, 'CLUSTER', 'INFO').catch(() => '')));
    return infos.every((info) => info.includes('cluster_state:ok'));
  }

  /** The port of the primary that serves `key`'s slot now. */
  async primaryOf(key: string): Promise<number> {
    const live = this.ports.find((port) => this.alive(port)) as number;
    const slot = Number((await redisCli(live, 'CLUSTER', 'KEYSLOT', key)).trim());
    const lines = (await redisCli(live, 'CLUSTER', 'NODES')).trim().split('\n');
    for (const line of lines) {
      const [, address, flags, , , , , linkState, ...ranges] = line.split(' ');
      if (!flags.includes('master') || flags.includes('fail') || linkState !== 'connected') continue;
      const owns = ranges.some((range) => {
        const [from, to] = range.split('-').map(Number);
        return slot >= from && slot <= (to ?? from);
      });
      if (owns) return Number(address.split('@')[0].split(':')[1]);
    }
    throw new Error(`no primary serves slot ${slot}`);
  }

  /** SIGKILL of one node by its own pid. */
  async kill(port: number): Promise<void> {
    const child = this.nodes.get(port)?.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async stop(): Promise<void> {
    for (const port of this.ports) await this.kill(port);
    for (const { dir } of this.nodes.values()) rmSync(dir, { recursive: true, force: true });
    this.nodes.clear();
  }

  private async until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`redis cluster: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
