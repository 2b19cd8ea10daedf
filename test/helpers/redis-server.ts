import { ChildProcess, spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { freePort } from './test-app';

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** A private, throw-away redis-server on a free port that a test can stop and start again. */
export class RedisServer {
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  static async reserve(): Promise<RedisServer> {
    return new RedisServer(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error('redis-server did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops only the redis-server this helper started (by its own pid). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
