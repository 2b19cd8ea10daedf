import { execFile, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { AddressInfo, Server, Socket, createServer } from 'node:net';
import { join } from 'node:path';
import { testDatabaseServerUrl, testRedisUrl } from '../scripts/test-servers';
import { createAccount } from './helpers/factories';
import { freePort, startApp } from './helpers/test-app';

const ROOT = join(__dirname, '..');
const PREFLIGHT = join(ROOT, 'scripts', 'preflight.js');
const STACK_FRAME = /^\s+at .+\(.+:\d+:\d+\)$/m;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
/** Preflight's first line when the Node.js running it is end of life (20 here); the service checks come after it. */
const NODE_LINE = /^preflight: WARNING: Node\.js v\d+\.\d+\.\d+ reached end of life[^\n]*\n/;
const withoutNodeLine = (output: string): string => output.replace(NODE_LINE, '');
/** `npm run services` looks after this machine's servers: checked when the run uses them (no TEST_*_URL elsewhere). */
const LOCAL_SERVERS =
  new URL(testDatabaseServerUrl()).host === '127.0.0.1:5432' && new URL(testRedisUrl()).host === '127.0.0.1:6379';

interface NodeRelease {
  version: string;
  major: number;
  role: string;
}
const { nodeLineNotice } = createRequire(__filename)(join(ROOT, 'scripts', 'node-line.js')) as {
  nodeLineNotice(version: string, today: string, tested: NodeRelease[]): { level: string; line: string } | undefined;
};

interface Run {
  code: number | null;
  output: string;
  ms: number;
}

/** Runs a command in the repository with env overrides; stdout and stderr together. */
function run(file: string, args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, output: stdout + stderr, ms: Date.now() - started });
      },
    );
  });
}

/** The postmaster of the local cluster and the redis-server on 6379: what `npm run services` would start. */
function localServerPids(): string[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).split('\n');
  const servers = lines
    .filter(
      (line) =>
        /redis-server \S*:6379\b/.test(line) || /bin\/postgres -D \/var\/lib\/postgresql\/[^/]+\/main/.test(line),
    )
    .map((line) => line.trim().split(/\s+/));
  // A child the server has just forked (a PostgreSQL backend for another spec's connection, Redis's
  // save) shows the server's command line until it sets its own: only a process whose parent is not
  // one of them is a server.
  const pids = new Set(servers.map(([pid]) => pid));
  return servers
    .filter(([, ppid]) => !pids.has(ppid))
    .map(([pid]) => pid)
    .sort();
}

const sockets = new Set<Socket>();

/** A TCP server on 127.0.0.1 that answers every connection with `reply` (or never, when null). */
async function fakeServer(reply: string | null): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (reply !== null) socket.once('data', () => socket.end(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function closeServer(server: Server): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('first run on a machine where a service does not answer', () => {
  it('stops the start path within seconds when PostgreSQL does not answer, naming it, its URL and the fixes', async () => {
    const port = await freePort();
    const url = `postgres://postgres:s3cret@127.0.0.1:${port}/kyc`;
    for (const [file, args] of [
      [process.execPath, [PREFLIGHT]],
      ['npm', ['start']],
    ] as const) {
      const result = await run(file, [...args], { DATABASE_URL: url });
      expect(result.code).toBe(1);
      expect(result.ms).toBeLessThan(10_000);
      expect(result.output).toContain(`PostgreSQL at postgres://postgres:****@127.0.0.1:${port}/kyc does not answer`);
      expect(result.output).not.toContain('s3cret');
      expect(result.output).toContain('npm run services');
      expect(result.output).toContain('docker compose -f docker-compose.dev.yml up -d postgres');
      expect(result.output).toContain('DATABASE_URL');
      expect(result.output).not.toMatch(STACK_FRAME);
      expect(result.output).not.toContain('Migration failed');
    }
  });

  it('tells a wrong password apart from a server that is down', async () => {
    const server = new URL(process.env.DATABASE_URL as string);
    const url = `postgres://no_such_role_first_run:s3cret@${server.host}/kyc`;
    const result = await run(process.execPath, [PREFLIGHT], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.output).toContain('refused the credentials');
    expect(result.output).toContain('pg_hba.conf');
    expect(result.output).not.toContain('s3cret');
  });

  it('accepts a server whose database does not exist yet (npm start creates it)', async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.pathname = '/kyc_first_run_missing';
    const result = await run(process.execPath, [PREFLIGHT], { DATABASE_URL: url.toString() });
    expect({ code: result.code, output: withoutNodeLine(result.output) }).toEqual({ code: 0, output: '' });
  });

  it('warns once when Redis does not answer, and the service keeps serving its APIs', async () => {
    const redisUrl = `redis://127.0.0.1:${await freePort()}`;
    const preflight = await run(process.execPath, [PREFLIGHT], { REDIS_URL: redisUrl });
    expect(preflight.code).toBe(0);
    expect(preflight.output.match(/WARNING: Redis at/g)).toHaveLength(1);
    expect(preflight.output).toContain(redisUrl);
    expect(preflight.output).toContain('webhooks wait');
    expect(preflight.output).toContain('docker compose -f docker-compose.dev.yml up -d redis');
    expect(preflight.output).toContain('npm run services');

    const t = await startApp({ REDIS_URL: redisUrl, LOG_LEVEL: 'info' });
    try {
      expect((await t.http.get('/health/live')).status).toBe(200);
      const account = await createAccount(t);
      const list = await t.http
        .get('/api/v1/public/kyc/verifications')
        .set('authorization', `Bearer ${account.secret}`);
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([]);
      expect(preflight.output + t.output.join('')).toMatch(/redis/i);
    } finally {
      await t.close();
    }
  });

  it('stops within seconds when the PostgreSQL port accepts but never answers', async () => {
    const { server, port } = await fakeServer(null);
    try {
      const result = await run(process.execPath, [PREFLIGHT], {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/kyc`,
      });
      expect(result.code).toBe(1);
      expect(result.ms).toBeLessThan(10_000);
      expect(result.output).toContain('does not answer (timeout)');
    } finally {
      await closeServer(server);
    }
  });

  it('names protected mode when Redis refuses with DENIED', async () => {
    const { server, port } = await fakeServer(
      '-DENIED Redis is running in protected mode because protected mode is enabled\r\n',
    );
    try {
      const result = await run(process.execPath, [PREFLIGHT], { REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(result.code).toBe(0);
      expect(result.output).toContain('Redis is in protected mode');
      expect(result.output).toContain('requirepass');
    } finally {
      await closeServer(server);
    }
  });

  it('accepts a Redis Cluster when any one node answers', async () => {
    const closed = await freePort();
    const result = await run(process.execPath, [PREFLIGHT], {
      REDIS_CLUSTER_NODES: `127.0.0.1:${closed},${new URL(process.env.REDIS_URL as string).host}`,
    });
    expect({ code: result.code, output: withoutNodeLine(result.output) }).toEqual({ code: 0, output: '' });
  });

  it('npm run services says what to install and fails when the binaries are missing', async () => {
    const result = await run('/bin/bash', [join(ROOT, 'scripts', 'services.sh')], { PATH: '/nonexistent' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('apt-get install -y postgresql');
    expect(result.output).toContain('apt-get install -y redis-server');
  });

  (LOCAL_SERVERS ? it : it.skip)(
    'npm run services starts nothing when PostgreSQL and Redis already answer',
    async () => {
      const before = localServerPids();
      expect(before).not.toHaveLength(0);
      const result = await run('npm', ['run', 'services'], {});
      expect(result.code).toBe(0);
      expect(result.output).toContain('PostgreSQL already answers on 127.0.0.1:5432');
      expect(result.output).toContain('Redis already answers on 127.0.0.1:6379');
      expect(result.output).not.toContain('starting');
      expect(localServerPids()).toEqual(before);
    },
  );
});

describe('preflight on the Node.js it runs on', () => {
  it('says in one line that an end-of-life Node.js should go and which line to install, and nothing on 22, 24 or 26', async () => {
    const result = await run(process.execPath, [PREFLIGHT], {});
    expect(result.code).toBe(0);
    const nodeLines = result.output.split('\n').filter((line) => line.includes('Node.js'));
    if (NODE_MAJOR === 20) {
      expect(nodeLines).toEqual([
        expect.stringMatching(
          /^preflight: WARNING: Node\.js v20\.\d+\.\d+ reached end of life on 2026-04-30 and gets no security fixes; install Node\.js 26 or 24 \(LTS; the image runs 26\.\d+\.\d+, CI tests [\d., ]+\)\.$/,
        ),
      ]);
      expect(result.output).toMatch(NODE_LINE);
    } else {
      expect({ node: process.versions.node, nodeLines }).toEqual({ node: process.versions.node, nodeLines: [] });
    }
  });

  const tested: NodeRelease[] = [
    { version: '26.10.0', major: 26, role: 'image' },
    { version: '24.21.0', major: 24, role: 'lts' },
    { version: '22.23.3', major: 22, role: 'maint' },
    { version: '20.20.2', major: 20, role: 'oldest' },
  ];
  it.each([
    ['18.20.4', '2026-11-26', 'error', 'Node.js v18.20.4 is too old (the service needs 20.19 or newer)'],
    ['20.18.3', '2026-11-26', 'error', 'Node.js v20.18.3 is too old (the service needs 20.19 or newer)'],
    ['20.19.0', '2026-04-29', undefined, undefined],
    [
      '20.19.0',
      '2026-04-30',
      'warning',
      'Node.js v20.19.0 reached end of life on 2026-04-30 and gets no security fixes',
    ],
    ['22.23.3', '2026-11-26', undefined, undefined],
    ['22.23.3', '2027-05-01', 'warning', 'Node.js v22.23.3 reached end of life on 2027-04-30'],
    ['23.11.0', '2026-11-26', 'warning', 'Node.js v23.11.0 is not a line this service is tested on'],
    ['24.0.0', '2026-11-26', undefined, undefined],
    ['26.10.0', '2026-11-26', undefined, undefined],
    ['27.0.0', '2026-11-26', 'warning', 'Node.js v27.0.0 is not a line this service is tested on'],
  ])('Node.js %s on %s: %s', (version, today, level, says) => {
    const notice = nodeLineNotice(version, today, tested);
    expect(notice?.level).toBe(level);
    if (notice) {
      expect(notice.line).toContain(says ?? '');
      expect(notice.line).toContain(
        'install Node.js 26 or 24 (LTS; the image runs 26.10.0, CI tests 26.10.0, 24.21.0, 22.23.3, 20.20.2).',
      );
      expect(notice.line).not.toContain('\n');
    }
  });
});
