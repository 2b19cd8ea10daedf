import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './test-app';

const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** PostgreSQL refuses to run as root: every binary runs as the `postgres` OS user. */
function asPostgres(binary: string, args: string[]): string {
  return execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, binary), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}

/** One PostgreSQL server of the throwaway cluster, with every statement in its log file. */
export class PgNode {
  constructor(
    readonly name: string,
    readonly dataDir: string,
    readonly port: number,
    readonly logFile: string,
  ) {}

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** The postmaster's PID, from postmaster.pid (undefined when it is not running). */
  pid(): number | undefined {
    const file = join(this.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  start(): void {
    asPostgres('pg_ctl', ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', this.logFile]);
  }

  /** `pg_ctl stop -m immediate` (no shutdown checkpoint, connections dropped), SIGKILL if that fails. */
  stopImmediate(): void {
    const pid = this.pid();
    if (pid === undefined) return;
    try {
      asPostgres('pg_ctl', ['stop', '-w', '-t', '30', '-m', 'immediate', '-D', this.dataDir]);
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Current end of the log file: read what a request logged with `logSince(mark)`. */
  logMark(): number {
    return existsSync(this.logFile) ? statSync(this.logFile).size : 0;
  }

  logSince(mark: number): string {
    return readFileSync(this.logFile).subarray(mark).toString('utf8');
  }
}

export interface PrimaryAndStandby {
  primary: PgNode;
  standby: PgNode;
  /** Stops both servers (immediate) by data dir / PID and removes the temporary directory. */
  close(): void;
}

const LOGGING = [
  "log_statement = 'all'",
  "log_line_prefix = '%m [%p] %d '",
  'logging_collector = off',
  "log_min_messages = 'warning'",
];

export interface LonePrimary {
  primary: PgNode;
  /** Stops the server (immediate) and removes the temporary directory. */
  close(): void;
}

/** A temporary directory owned by the `postgres` OS user. */
function postgresOwnedDir(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(root, uid, gid);
  return root;
}

/** initdb and start a primary (wal_level=replica) on a free port of 127.0.0.1, its socket in `root`. */
async function initPrimary(root: string): Promise<PgNode> {
  const primary = new PgNode('primary', join(root, 'primary'), await freePort(), join(root, 'primary.log'));
  asPostgres('initdb', ['-D', primary.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
  appendFileSync(
    join(primary.dataDir, 'postgresql.conf'),
    [
      `port = ${primary.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${root}'`,
      'wal_level = replica',
      'max_wal_senders = 5',
      'hot_standby = on',
      'fsync = off',
      ...LOGGING,
      '',
    ].join('\n'),
  );
  appendFileSync(join(primary.dataDir, 'pg_hba.conf'), 'host replication postgres 127.0.0.1/32 trust\n');
  return primary;
}

/** A throwaway PostgreSQL server of the test's own, never the machine's: its settings are the test's to change. */
export async function startLonePrimary(): Promise<LonePrimary> {
  const root = postgresOwnedDir('kyc-pg-primary-');
  let primary: PgNode | undefined;
  const close = (): void => {
    primary?.stopImmediate();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    primary = await initPrimary(root);
    primary.start();
    return { primary, close };
  } catch (error) {
    close();
    throw error;
  }
}

/**
 * A primary (initdb, wal_level=replica) and a hot standby made from it with pg_basebackup -R, each
 * on a free port of 127.0.0.1 with its own socket directory, in one temporary directory owned by
 * the `postgres` OS user. Never the machine's own server.
 */
export async function startPrimaryAndStandby(): Promise<PrimaryAndStandby> {
  const root = postgresOwnedDir('kyc-pg-replica-');
  const nodes: PgNode[] = [];
  const close = (): void => {
    for (const node of [...nodes].reverse()) node.stopImmediate();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const primary = await initPrimary(root);
    nodes.push(primary);
    primary.start();

    const standby = new PgNode('standby', join(root, 'standby'), await freePort(), join(root, 'standby.log'));
    asPostgres('pg_basebackup', [
      '-R',
      '-X',
      'stream',
      '-D',
      standby.dataDir,
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
    ]);
    // The copied postgresql.conf is the primary's; the last setting of a name wins.
    appendFileSync(join(standby.dataDir, 'postgresql.conf'), `port = ${standby.port}\n`);
    nodes.push(standby);
    standby.start();
    return { primary, standby, close };
  } catch (error) {
    close();
    throw error;
  }
}
