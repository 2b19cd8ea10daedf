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

function parsedOrigin(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? undefined : url;
  } catch {
    return undefined;
  }
}

/**
 * The page is https and the service was reached over http at the same host and port: a proxy in
 * front terminates TLS (`trust proxy` is off, so the service sees only its own socket's scheme).
 * The host is the service's own, so the page is too.
 */
function tlsTerminatedInFront(origin: URL, own: URL): boolean {
  return (
    origin.protocol === 'https:' &&
    own.protocol === 'http:' &&
    origin.hostname === own.hostname &&
    (origin.port || '443') === (own.port || '443')
  );
}

/**
 * True for a state-changing request that a page of another origin made the browser send: any method
 * but GET/HEAD whose `Origin` is not the service's own, or whose `Sec-Fetch-Site` is `cross-site` or
 * `same-site`. Browsers attach cached Basic credentials to such requests by themselves, so the
 * credential proves nothing. A request with neither header (curl, scripts) is not a browser's. An
 * https page of the service's own host reaching it over http is its own (TLS terminated in front).
 */
export function isCrossSiteWrite(request: OriginHeaders): boolean {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return false;
  if (request.secFetchSite !== undefined && FOREIGN_SITES.has(request.secFetchSite.trim().toLowerCase())) return true;
  if (request.origin === undefined) return false;
  const origin = parsedOrigin(request.origin);
  const own = request.ownOrigin === undefined ? undefined : parsedOrigin(request.ownOrigin);
  if (origin === undefined || own === undefined) return true;
  return origin.origin !== own.origin && !tlsTerminatedInFront(origin, own);
}
