import type { INestApplication } from '@nestjs/common';
import type { RequestHandler } from 'express';

/** Prefix of the client-facing API; its every response carries the rate-limit headers. */
export const PUBLIC_API_PREFIX = '/api/v1/public';

/**
 * A middleware for every public-API request, run before body parsing so that even 413/415/404
 * responses pass through it; provided by the auth feature (the per-account rate limiter).
 */
export const PUBLIC_API_MIDDLEWARE = Symbol('PUBLIC_API_MIDDLEWARE');

export function publicApiMiddleware(app: INestApplication): RequestHandler | undefined {
  try {
    return app.get<RequestHandler>(PUBLIC_API_MIDDLEWARE, { strict: false });
  } catch {
    return undefined; // no provider: the rate limiter is not part of this application
  }
}
