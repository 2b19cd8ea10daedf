/**
 * Preloaded into the bench's worker (`node --require …/pass-gate.js dist/src/main.js`, NODE_PATH=dist
 * so it patches the service's own modules, with an IPC channel): a gate in front of each batch of the
 * retention pass (MaintenanceBudget.batch: the rest the budget owes, then the batch, so a closed gate's
 * wait is not counted as the batch's cost) and each delivery job
 * (WebhookDeliveryProcessor.process), so the bench can pause the worker between two batches, alive
 * and warm. {gate: 'close', seq}: work under way goes on to its end (a batch to its COMMIT), new work
 * waits; once nothing runs the worker answers {paused: seq} and holds no transaction and no lock.
 * {gate: 'open'} lets the waiting work go; open, the gate costs a counter and a promise layer per
 * batch and per job. Nothing of the service's code is changed on disk.
 */
import 'reflect-metadata';
import { MaintenanceBudget } from 'src/retention/maintenance-budget';
import { WebhookDeliveryProcessor } from 'src/webhooks/delivery/webhook-delivery.processor';

export type GateMessage = { gate: 'close'; seq: number } | { gate: 'open' };
export type GateReply = { paused: number };

let [closed, closeSeq, running] = [false, 0, 0];
let opened: Promise<void> = Promise.resolve();
let open: () => void = () => undefined;

const reportIfPaused = (): void =>
  void (closed && running === 0 && process.send?.({ paused: closeSeq } satisfies GateReply));

function gated<A extends unknown[], R>(work: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async function (this: unknown, ...args: A): Promise<R> {
    while (closed) await opened;
    running++;
    try {
      return await work.apply(this, args);
    } finally {
      running--;
      reportIfPaused();
    }
  };
}

MaintenanceBudget.prototype.batch = gated(
  MaintenanceBudget.prototype.batch,
) as typeof MaintenanceBudget.prototype.batch;
// PASS_GATE_JOBS=off leaves deliveries alone (the year bench measures webhooks in both kinds of slice).
if (process.env.PASS_GATE_JOBS !== 'off')
  WebhookDeliveryProcessor.prototype.process = gated(WebhookDeliveryProcessor.prototype.process);

process.on('message', (message: GateMessage) => {
  if (message.gate === 'close') {
    if (!closed) opened = new Promise((resolve) => (open = resolve));
    [closed, closeSeq] = [true, message.seq];
    reportIfPaused();
  } else if (closed) {
    closed = false;
    open();
  }
});
