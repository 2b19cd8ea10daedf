#!/usr/bin/env node
import { EventForwarder, ListenFatalError } from 'src/listen/event-forwarder';
import { ListenUsageError, parseListenArgs } from 'src/listen/listen-args';

/** kyc-listen: the account's event stream forwarded to a local URL (no Nest: it starts in milliseconds). */
function main(): void {
  let options;
  try {
    options = parseListenArgs(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof ListenUsageError)) throw error;
    process.stderr.write(`kyc-listen: ${error.message}\n`);
    process.exit(2);
  }
  const forwarder = new EventForwarder(
    options,
    (line) => process.stdout.write(`${line}\n`),
    (line) => process.stderr.write(`${line}\n`),
  );
  const stop = (): void => {
    process.stdout.write(`${forwarder.stop()}\n`);
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  forwarder.run().then(
    () => undefined,
    (error: unknown) => {
      process.stderr.write(`${error instanceof ListenFatalError ? error.message : String(error)}\n`);
      process.stdout.write(`${forwarder.stop()}\n`);
      process.exit(1);
    },
  );
}

main();
