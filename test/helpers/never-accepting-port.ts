import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type Socket, connect } from 'node:net';

/** A port on 127.0.0.1 whose connections never complete, until `close`. */
export interface NeverAcceptingPort {
  port: number;
  /** Ends the listening process (by its PID) and the connections that fill its queue. */
  close(): void;
}

/**
 * A port on 127.0.0.1 where a connect never completes: a child process listens with an accept queue
 * of one (the kernel then queues two connections) and never accepts from it; the queue is filled
 * here, so the kernel drops a further connection's SYN and that connect stays pending. The listener
 * is a process of its own because it blocks its thread for good (a listener in this process would
 * accept). `port` is a port just freed (a keep-alive endpoint that went away), else the kernel picks one.
 * (Node.js takes a backlog of 0 for its default, so one is the smallest queue it makes.)
 */
export async function neverAcceptingPort(port = 0): Promise<NeverAcceptingPort> {
  const listen = `const server = require('net').createServer();
    server.listen({ port: ${port}, host: '127.0.0.1', backlog: 1 }, () => {
      console.log(server.address().port);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    })`;
  const child = spawn(process.execPath, ['-e', listen], { stdio: ['ignore', 'pipe', 'inherit'] });
  const queued: Socket[] = [];
  const close = () => {
    for (const socket of queued) socket.destroy();
    child.kill('SIGKILL');
  };
  try {
    const exited = once(child, 'exit').then(() => Promise.reject(new Error(`no listener could take port ${port}`)));
    const [line] = (await Promise.race([once(child.stdout, 'data'), exited])) as [Buffer];
    const taken = Number(line.toString().trim());
    for (let i = 0; i < 2; i += 1) {
      queued.push(connect(taken, '127.0.0.1'));
      await once(queued[i], 'connect');
    }
    return { port: taken, close };
  } catch (error) {
    close();
    throw error;
  }
}
