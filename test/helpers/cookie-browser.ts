/**
 * What a browser does for the login specs, over fetch: redirects followed one by one (each answer
 * kept), cookies kept per host (not port, as browsers do) and sent where their Path matches,
 * removed by Max-Age=0. Enough for the OIDC code flow; a real browser is driven in the browser spec.
 */
export interface Hop {
  url: string;
  status: number;
  location: string | null;
  setCookies: string[];
  body: string;
}

interface StoredCookie {
  value: string;
  path: string;
}

export class CookieBrowser {
  private readonly jar = new Map<string, Map<string, StoredCookie>>();

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).hostname)?.get(name)?.value;
  }

  setCookie(url: string, name: string, value: string, path = '/'): void {
    const host = new URL(url).hostname;
    const cookies = this.jar.get(host) ?? new Map<string, StoredCookie>();
    cookies.set(name, { value, path });
    this.jar.set(host, cookies);
  }

  /** One request, no redirect followed. */
  async request(url: string, init: RequestInit = {}): Promise<Hop> {
    const target = new URL(url);
    const cookies = [...(this.jar.get(target.hostname) ?? new Map<string, StoredCookie>())]
      .filter(([, c]) => target.pathname === c.path || target.pathname.startsWith(c.path.replace(/\/?$/, '/')))
      .map(([name, c]) => `${name}=${c.value}`);
    const headers = new Headers(init.headers);
    if (cookies.length > 0) headers.set('cookie', cookies.join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    const setCookies = res.headers.getSetCookie();
    for (const line of setCookies) this.store(target, line);
    const location = res.headers.get('location');
    return {
      url,
      status: res.status,
      location: location === null ? null : new URL(location, url).href,
      setCookies,
      body: await res.text(),
    };
  }

  /** Follows redirects (GET) until an answer that is not one; every hop is returned. */
  async follow(url: string, init: RequestInit = {}): Promise<Hop[]> {
    const hops = [await this.request(url, init)];
    while (hops.length < 20) {
      const last = hops[hops.length - 1];
      if (last.status < 300 || last.status >= 400 || last.location === null) return hops;
      hops.push(await this.request(last.location));
    }
    throw new Error(`too many redirects from ${url}`);
  }

  private store(url: URL, line: string): void {
    const [pair, ...attributes] = line.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    const attribute = (key: string): string | undefined =>
      attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
    const maxAge = attribute('max-age');
    const expires = attribute('expires');
    const gone =
      (maxAge !== undefined && Number(maxAge) <= 0) || (expires !== undefined && Date.parse(expires) < Date.now());
    const cookies = this.jar.get(url.hostname) ?? new Map<string, StoredCookie>();
    if (gone) cookies.delete(name);
    else cookies.set(name, { value, path: attribute('path') ?? '/' });
    this.jar.set(url.hostname, cookies);
  }
}
