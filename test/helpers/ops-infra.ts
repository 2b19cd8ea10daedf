import { ChildProcess, spawn } from 'node:child_process';
import { Server, Socket, connect, createServer } from 'node:net';
import { freePort } from './test-app';

/** A throwaway redis-server of our own, so a test can take "Redis" down without touching the shared one. */
export interface OwnRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startOwnRedis(port?: number): Promise<OwnRedis> {
  const chosen = port ?? (await freePort());
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const deadline = Date.now() + 5_000;
  while (!(await answers(chosen))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on ${chosen} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.write('PING\r\n');
    });
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A TCP forwarder to PostgreSQL that a test can cut (every connection dropped, port closed) and
 * restore on the same port: "PostgreSQL went away" without stopping the shared server.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Where this run's PostgreSQL server listens (DATABASE_URL, made from TEST_DATABASE_URL): what proxies forward to. */
export function databaseServer(): { port: number; host: string } {
  const url = new URL(process.env.DATABASE_URL as string);
  return { port: Number(url.port || 5432), host: url.hostname.replace(/^\[|\]$/g, '') };
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        sockets.add(client);
        sockets.add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = (): void => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const cut = async (): Promise<void> => {
    const current = server as Server | null;
    server = null;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (current) await new Promise((resolve) => current.close(() => resolve(undefined)));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

/** Every JSON line the process printed (non-JSON lines are skipped). */
export function jsonLines(output: string[]): Record<string, unknown>[] {
  return output
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}
