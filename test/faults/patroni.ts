import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/test-app';
import { findHaproxy } from './haproxy';
import { sleep, waitUntil } from './harness';

/**
 * A Patroni cluster of the test's own, from Debian's packages and the project's deploy files: one
 * etcd, two PostgreSQL 15 nodes run by Patroni (deploy/patroni/patroni.yml, synchronous
 * replication), and HAProxy with deploy/haproxy/postgres.cfg (primary and replicas listeners
 * checked on Patroni's REST API), all on free ports of 127.0.0.1. Never the machine's own server.
 */

const ROOT = join(__dirname, '..', '..');
export const PATRONI_MISSING =
  'Patroni, etcd or HAProxy is missing: apt-get install -y patroni etcd-server haproxy (.ci/run installs them)';

export function patroniInstalled(): boolean {
  return existsSync('/usr/bin/patroni') && existsSync('/usr/bin/etcd') && findHaproxy() !== undefined;
}

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  process: ChildProcess;
}

interface Member {
  name: string;
  role: string;
  state: string;
}

export interface PatroniCluster {
  nodes: PatroniNode[];
  /** The HAProxy listener that leads to the primary, and the one that leads to the standbys. */
  primaryUrl(database: string): string;
  replicasUrl(database: string): string;
  members(): Promise<Member[]>;
  leader(): Promise<PatroniNode>;
  /** SIGKILL to the leader's postmaster: Patroni restarts it in place (it still holds the leader key). */
  killPostmaster(node: PatroniNode): void;
  /** SIGKILL to the node's Patroni alone: its PostgreSQL runs on unmanaged, HAProxy's check of it fails, and
   * once the leader key expires (ttl) the other node is promoted. */
  killPatroni(node: PatroniNode): void;
  /** Starts the node's Patroni again; resolves once it streams from the leader as a standby (rewound if it must be). */
  restartPatroni(node: PatroniNode): Promise<void>;
  /** Resolves once a synchronous standby streams and is recorded as such: only then may Patroni promote it. */
  settled(): Promise<void>;
  /** Patroni's planned switchover to the other node, through its REST API. */
  switchover(from: PatroniNode, to: PatroniNode): Promise<void>;
  /** The members' roles and states and the tail of each process's log, for a failure's message. */
  describe(): Promise<string>;
  stop(): void;
}

/** `binary` started with its output kept in `output` (a restarted process's after its predecessor's). */
function spawnLogged(
  binary: string,
  args: string[],
  options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv },
  output: string[] = [],
) {
  const child = spawn(binary, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return { child, output };
}

function nodeConfig(
  node: { name: string; pgPort: number; restPort: number; dataDir: string },
  root: string,
  etcdPort: number,
) {
  const shipped = readFileSync(join(ROOT, 'deploy', 'patroni', 'patroni.yml'), 'utf8');
  const config = shipped
    .replace(/^name: node1$/m, `name: ${node.name}`)
    .replace(/127\.0\.0\.1:8008/g, `127.0.0.1:${node.restPort}`)
    .replace(/host: 127\.0\.0\.1:2379/, `host: 127.0.0.1:${etcdPort}`)
    .replace(/127\.0\.0\.1:5432/g, `127.0.0.1:${node.pgPort}`)
    .replace(/data_dir: .*$/m, `data_dir: ${node.dataDir}`)
    .replace(/pgpass: .*$/m, `pgpass: ${join(root, `pgpass-${node.name}`)}`)
    .replace(/unix_socket_directories: .*$/m, `unix_socket_directories: '${root}'`)
    // PATRONI_ASYNC=1: Patroni's default asynchronous replication in place of the shipped synchronous
    // mode, to measure what the shipped one buys (docs/scaling.md); the test is expected to find losses.
    .replace(/^( {4}synchronous_mode:) true$/m, process.env.PATRONI_ASYNC ? '$1 false' : '$&');
  if (process.env.PATRONI_ASYNC && !config.includes('    synchronous_mode: false')) {
    throw new Error('deploy/patroni/patroni.yml no longer has the synchronous_mode line PATRONI_ASYNC replaces');
  }
  if (!config.includes(`name: ${node.name}`) || !config.includes(`data_dir: ${node.dataDir}`)) {
    throw new Error('deploy/patroni/patroni.yml no longer has the lines this test replaces');
  }
  return config;
}

function haproxyConfig(primaryPort: number, replicasPort: number, nodes: PatroniNode[]): string {
  const shipped = readFileSync(join(ROOT, 'deploy', 'haproxy', 'postgres.cfg'), 'utf8');
  const servers = nodes
    .map((node) => `    server ${node.name} 127.0.0.1:${node.pgPort} maxconn 500 check port ${node.restPort}`)
    .join('\n');
  const config = shipped
    .replace(/^ {4}bind :5000$/m, `    bind 127.0.0.1:${primaryPort}`)
    .replace(/^ {4}bind :5001$/m, `    bind 127.0.0.1:${replicasPort}`)
    .replace(/^ {4}server node1 .*\n {4}server node2 .*$/gm, servers)
    // PATRONI_CHECK_TIMING (e.g. `inter 3s fall 3 rise 2`, Patroni's own example): the checks' timing in place of
    // the shipped one, to measure what the shipped one buys (docs/reliability.md).
    .replace(/inter 1s fastinter 250ms downinter 500ms fall 1 rise 2/g, process.env.PATRONI_CHECK_TIMING ?? '$&');
  const timing = process.env.PATRONI_CHECK_TIMING;
  if (timing && !config.includes(`default-server ${timing} `)) {
    throw new Error('deploy/haproxy/postgres.cfg no longer has the check timing PATRONI_CHECK_TIMING replaces');
  }
  if (!config.includes(`127.0.0.1:${primaryPort}`) || !config.includes(`check port ${nodes[1].restPort}`)) {
    throw new Error('deploy/haproxy/postgres.cfg no longer has the lines this test replaces');
  }
  return config;
}

export async function startPatroniCluster(): Promise<PatroniCluster> {
  const root = mkdtempSync(join(tmpdir(), 'kyc-patroni-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(root, uid, gid);
  const children: ChildProcess[] = [];
  const logs: Record<string, string[]> = {};
  const nodes: PatroniNode[] = [];
  const stop = (): void => {
    describeLogs(logs);
    for (const node of nodes) {
      node.process.kill('SIGKILL');
      const pidFile = join(node.dataDir, 'postmaster.pid');
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    for (const child of children) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
    const etcd = spawnLogged(
      '/usr/bin/etcd',
      [
        '--name=kyc',
        `--data-dir=${join(root, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=kyc=http://127.0.0.1:${etcdPeer}`,
        '--enable-v2=true',
      ],
      {},
    );
    children.push(etcd.child);
    logs.etcd = etcd.output;
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`).catch(() => undefined))?.status === 200,
      20_000,
      'etcd to answer',
      100,
    );

    const startPatroni = (node: PatroniNode | Omit<PatroniNode, 'process'>): ChildProcess => {
      const env = { PATH: process.env.PATH, HOME: root, LANG: 'C.UTF-8' };
      logs[node.name] ??= [];
      return spawnLogged('/usr/bin/patroni', [join(root, `${node.name}.yml`)], { uid, gid, env }, logs[node.name])
        .child;
    };
    for (const name of ['node1', 'node2']) {
      const spec = { name, pgPort: await freePort(), restPort: await freePort(), dataDir: join(root, name) };
      const configPath = join(root, `${name}.yml`);
      writeFileSync(configPath, nodeConfig(spec, root, etcdClient));
      mkdirSync(spec.dataDir, { mode: 0o700 });
      chownSync(spec.dataDir, uid, gid);
      chownSync(configPath, uid, gid);
      nodes.push({ ...spec, process: startPatroni(spec) });
      // The first node bootstraps (initdb) and leads before the second clones it.
      if (name === 'node1') {
        await waitUntil(async () => isPrimary(spec.restPort), 60_000, 'node1 to lead', 250).catch((error: Error) => {
          throw new Error(`${error.message}\n${describeLogs(logs)}`);
        });
      }
    }

    const [primaryPort, replicasPort] = [await freePort(), await freePort()];
    const haproxyDir = join(root, 'haproxy');
    mkdirSync(haproxyDir);
    writeFileSync(join(haproxyDir, 'postgres.cfg'), haproxyConfig(primaryPort, replicasPort, nodes));
    const haproxy = spawnLogged(findHaproxy() as string, ['-db', '-f', join(haproxyDir, 'postgres.cfg')], {});
    children.push(haproxy.child);
    logs.haproxy = haproxy.output;

    const members = async (): Promise<Member[]> => {
      for (const node of nodes) {
        const res = await fetch(`http://127.0.0.1:${node.restPort}/cluster`, {
          signal: AbortSignal.timeout(2_000),
        }).catch(() => undefined);
        if (res?.ok) return ((await res.json()) as { members: Member[] }).members;
      }
      return [];
    };
    const syncStandby = (name?: string) =>
      waitUntil(
        async () =>
          (await members()).some(
            (m) =>
              m.role === (process.env.PATRONI_ASYNC ? 'replica' : 'sync_standby') &&
              ['running', 'streaming'].includes(m.state) &&
              (!name || m.name === name),
          ),
        90_000,
        `a synchronous standby streaming`,
        250,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${describeLogs(logs)}`);
      });
    await syncStandby();

    const cluster: PatroniCluster = {
      nodes,
      primaryUrl: (database) => `postgres://postgres@127.0.0.1:${primaryPort}/${database}`,
      replicasUrl: (database) => `postgres://postgres@127.0.0.1:${replicasPort}/${database}`,
      members,
      leader: async () => {
        const leader = (await members()).find((m) => m.role === 'leader');
        const node = nodes.find((n) => n.name === leader?.name);
        if (!node) throw new Error('no leader');
        return node;
      },
      killPostmaster: (node) => {
        const pid = Number(readFileSync(join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        process.kill(pid, 'SIGKILL');
      },
      killPatroni: (node) => {
        node.process.kill('SIGKILL');
      },
      restartPatroni: async (node) => {
        node.process = startPatroni(node);
        await syncStandby(node.name);
      },
      settled: () => syncStandby(),
      switchover: async (from, to) => {
        for (let tries = 0; ; tries += 1) {
          const res = await fetch(`http://127.0.0.1:${from.restPort}/switchover`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ leader: from.name, candidate: to.name }),
          });
          if (res.ok) return;
          if (tries >= 20) throw new Error(`switchover: ${res.status} ${await res.text()}`);
          await sleep(500);
        }
      },
      describe: async () => `members: ${JSON.stringify(await members().catch(() => []))}\n${describeLogs(logs, 30)}`,
      stop,
    };
    return cluster;
  } catch (error) {
    stop();
    throw error;
  }
}

/** Each process's log tail: its last 3000 characters, or with `lines` its last lines without the REST API's
 * tracebacks of checks that hung up early (HAProxy's), which would fill a failure's message. */
function describeLogs(logs: Record<string, string[]>, lines?: number): string {
  // PATRONI_LOG_FILE: where to keep the whole logs of etcd, Patroni and HAProxy, to look into a failure.
  if (process.env.PATRONI_LOG_FILE) {
    writeFileSync(
      process.env.PATRONI_LOG_FILE,
      Object.entries(logs)
        .map(([n, l]) => `--- ${n}\n${l.join('')}`)
        .join('\n'),
    );
  }
  const tail = (output: string[]): string => {
    if (lines === undefined) return output.join('').slice(-3000);
    const significant = output
      .join('')
      .split('\n')
      .filter(
        (line) =>
          line.trim() &&
          !/^\s|Traceback \(most recent call last\)|^\w*Error:|Exception happened during processing|: no action\. /.test(
            line,
          ),
      );
    return significant.slice(-lines).join('\n');
  };
  return Object.entries(logs)
    .map(([name, output]) => `--- ${name}\n${tail(output)}`)
    .join('\n');
}

/** Patroni's own health check of the leader: 200 on the primary only (what HAProxy's check reads too). */
async function isPrimary(restPort: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${restPort}/primary`).catch(() => undefined);
  return res?.status === 200;
}
