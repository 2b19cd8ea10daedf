import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { middlewareChain } from 'src/common/middleware-chain';

const req = {} as Request;
const res = {} as Response;

function run(handlers: RequestHandler[]): { calls: string[]; doneWith: unknown[] } {
  const calls: string[] = [];
  const doneWith: unknown[] = [];
  const done = ((error?: unknown) => doneWith.push(error)) as NextFunction;
  middlewareChain(
    handlers.map(
      (handler, i) =>
        ((...args: Parameters<RequestHandler>) => {
          calls.push(`h${i}`);
          return handler(...args);
        }) as RequestHandler,
    ),
  )(req, res, done);
  return { calls, doneWith };
}

describe('middlewareChain', () => {
  it('runs every middleware in order, then hands over once', () => {
    const pass: RequestHandler = (_req, _res, next) => next();
    expect(run([pass, pass, pass])).toEqual({ calls: ['h0', 'h1', 'h2'], doneWith: [undefined] });
  });

  it('stops at a middleware that answers (does not call next)', () => {
    const pass: RequestHandler = (_req, _res, next) => next();
    const answer: RequestHandler = () => undefined;
    expect(run([pass, answer, pass])).toEqual({ calls: ['h0', 'h1'], doneWith: [] });
  });

  it('passes an error given to next, or thrown, to the error handlers and skips the rest', () => {
    const boom = new Error('boom');
    const pass: RequestHandler = (_req, _res, next) => next();
    expect(run([(_req, _res, next) => next(boom), pass])).toEqual({ calls: ['h0'], doneWith: [boom] });
    const thrower: RequestHandler = () => {
      throw boom;
    };
    expect(run([pass, thrower, pass])).toEqual({ calls: ['h0', 'h1'], doneWith: [boom] });
  });

  it('continues after a middleware that calls next later', async () => {
    const later: RequestHandler = (_req, _res, next) => void setImmediate(() => next());
    const result = run([later, (_req, _res, next) => next()]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(result).toEqual({ calls: ['h0', 'h1'], doneWith: [undefined] });
  });
});
