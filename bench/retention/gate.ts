import type { BenchProcess } from '../harness/processes';
import type { GateMessage, GateReply } from './pass-gate';

/** The bench's side of pass-gate.ts: `pause` resolves once the batch and the jobs under way have ended. */
export function gateOf(worker: BenchProcess) {
  let seq = 0;
  const waiting = new Map<number, () => void>();
  worker.child.on('message', (reply: GateReply) => waiting.get(reply.paused)?.());
  const send = (message: GateMessage): boolean => worker.child.send(message);
  const pause = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const [n, timer] = [++seq, setTimeout(() => reject(new Error('the worker did not pause within 60 s')), 60_000)];
      waiting.set(n, () => resolve(void (clearTimeout(timer), waiting.delete(n))));
      send({ gate: 'close', seq: n });
    });
  return { pause, resume: () => send({ gate: 'open' }) };
}
