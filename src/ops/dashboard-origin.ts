/** The request headers a cross-site decision reads. */
export interface OriginHeaders {
  method: string;
  origin?: string;
  secFetchSite?: string;
  /** `scheme://host` as this service was addressed (the socket's scheme and the Host header). */
  ownOrigin?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const FOREIGN_SITES = new Set(['cross-site', 'same-site']);

function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/**
 * True for a state-changing request that a page of another origin made the browser send: any method
 * but GET/HEAD whose `Origin` is not the service's own, or whose `Sec-Fetch-Site` is `cross-site` or
 * `same-site`. Browsers attach cached Basic credentials to such requests by themselves, so the
 * credential proves nothing. A request with neither header (curl, scripts) is not a browser's.
 */
export function isCrossSiteWrite(request: OriginHeaders): boolean {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return false;
  if (request.secFetchSite !== undefined && FOREIGN_SITES.has(request.secFetchSite.trim().toLowerCase())) return true;
  if (request.origin === undefined) return false;
  const origin = normalOrigin(request.origin);
  const own = request.ownOrigin === undefined ? undefined : normalOrigin(request.ownOrigin);
  return origin === undefined || own === undefined || origin !== own;
}
