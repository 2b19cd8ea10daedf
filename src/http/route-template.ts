import type { Request } from 'express';

/**
 * The matched route pattern (`/api/v1/public/kyc/verifications/:id`), never the raw URL, so logs
 * and metric labels stay bounded; requests that matched no route share one label.
 */
export function routeTemplate(req: Pick<Request, 'route' | 'baseUrl'>): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : 'unmatched';
}
