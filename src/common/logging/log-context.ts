import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line written while serving a request carries. */
export interface LogContext {
  readonly requestId: string;
  /** The request itself: the client guard sets `accountId` on it after the context was opened. */
  readonly request?: { readonly accountId?: string };
}

const storage = new AsyncLocalStorage<LogContext>();

export function runWithLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The pino mixin: request id and account id of the request being served, if any. */
export function logContextFields(): Record<string, string> {
  const context = storage.getStore();
  if (!context) return {};
  const accountId = context.request?.accountId;
  return accountId ? { request_id: context.requestId, account_id: accountId } : { request_id: context.requestId };
}

/** The request being served, if any (the audit trail reads its actor, id and address). */
export function currentRequest(): object | undefined {
  return storage.getStore()?.request;
}
