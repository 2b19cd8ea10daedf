import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Several middleware as one Express layer: each runs in turn, as `app.use` would run them, but the
 * router matches and dispatches one layer instead of one per middleware. An error (passed to next or
 * thrown) skips the rest and goes to Express's error handlers.
 */
export function middlewareChain(handlers: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction): void => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) return done(error);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        void handler(req, res, next);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
