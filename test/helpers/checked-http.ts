import { appendFileSync } from 'node:fs';
import { METHODS } from 'node:http';
import type { CallbackHandler, Response, Test } from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { OpenApiMismatchError, OpenApiValidator } from './openapi-validator';

const VERBS = new Set([...METHODS.map((m) => m.toLowerCase()), 'del']);
const uncheckedRequests = new WeakSet<Test>();

/**
 * Exempts one request from the OpenAPI check. Only for a request that deliberately steps outside
 * the contract, with a comment at the call site saying why.
 */
export function unchecked<T extends Test>(req: T): T {
  uncheckedRequests.add(req);
  return req;
}

/**
 * Set OPENAPI_MISMATCH_LOG to a file to collect every mismatch of a run as JSON lines; with
 * OPENAPI_MISMATCH_LOG_ONLY=1 as well, mismatches are only collected (a survey of the document's
 * defects that a first failing beforeAll would otherwise hide), never failing a test.
 */
function record(error: OpenApiMismatchError): void {
  const file = process.env.OPENAPI_MISMATCH_LOG;
  if (!file) return;
  const { method, path, template, status, problems } = error;
  const { currentTestName: test, testPath } = expect.getState();
  appendFileSync(file, `${JSON.stringify({ testPath, test, method, path, template, status, problems })}\n`);
}

function checkOnEnd(req: Test, validator: () => Promise<OpenApiValidator | undefined>): Test {
  // Made here so a failure points at the line that sent the request, not at supertest's callback.
  const origin = new Error();
  const end = req.end.bind(req);
  req.end = (fn?: CallbackHandler): Test => {
    const loading = validator();
    return end((err: Error | null, res: Response | undefined) => {
      if (!res || uncheckedRequests.has(req)) return fn?.call(req, err, res as Response);
      loading
        .then((v) => v?.check(req.method, new URL(req.url).pathname, res))
        .then(
          (mismatch) => {
            if (mismatch) {
              record(mismatch);
              mismatch.stack = `${mismatch.message}\n${origin.stack?.split('\n').slice(1).join('\n') ?? ''}`;
            }
            const logOnly = process.env.OPENAPI_MISMATCH_LOG && process.env.OPENAPI_MISMATCH_LOG_ONLY === '1';
            fn?.call(req, (logOnly ? undefined : mismatch) ?? err, res);
          },
          (error: Error) => fn?.call(req, error, res),
        );
    });
  };
  return req;
}

/**
 * `agent` whose every request, once its response is in, is checked against the OpenAPI document
 * the service serves: a response the document does not describe rejects the awaited request.
 */
export function checkedAgent(agent: TestAgent, validator: () => Promise<OpenApiValidator | undefined>): TestAgent {
  return new Proxy(agent, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function' || !VERBS.has(prop.toLowerCase())) return value;
      const verb = value as (this: TestAgent, url: string) => Test;
      return (url: string) => checkOnEnd(verb.call(target, url), validator);
    },
  });
}
