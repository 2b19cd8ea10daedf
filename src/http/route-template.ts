import type { Request } from 'express';

/**
 * Paths served by static-file middleware, which has no route pattern: Swagger UI's assets (mounted
 * by src/ops/openapi.ts) and the queue dashboard's (src/ops/queue-dashboard.ts). Each request under
 * one is labelled with the mount itself.
 */
const STATIC_MOUNTS = ['/api/docs', '/admin/queues/static'];

/**
 * The matched route pattern (`/api/v1/public/kyc/verifications/:id`), never the raw URL, so logs
 * and metric labels stay bounded; a file under a static mount is labelled with the mount
 * (`/api/docs`); other requests that matched no route share one label. Mounts are lower-cased.
 */
export function routeTemplate(req: Pick<Request, 'route' | 'baseUrl' | 'originalUrl'>): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  // Express matches a mount whatever the letter case, and baseUrl keeps the request's: every mount
  // of the service is declared in lower case, so that is its label.
  if (typeof path === 'string') return `${(req.baseUrl ?? '').toLowerCase()}${path}`;
  const url = (req.originalUrl ?? '').toLowerCase();
  return STATIC_MOUNTS.find((mount) => url.startsWith(`${mount}/`)) ?? 'unmatched';
}
