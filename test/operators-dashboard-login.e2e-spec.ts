import { CookieBrowser, type Hop } from './helpers/cookie-browser';
import { DASHBOARD_CLIENT, startIssuer, type TestIssuer } from './helpers/oidc-issuer';
import { TestApp, freePort, startApp } from './helpers/test-app';

const AUDIENCE = 'https://kyc.example/admin';
const QUEUES = '/admin/queues/api/queues';
const QUEUE = 'webhook-deliveries';
const EIGHT_HOURS_S = 8 * 3600;

interface AuditPage {
  data: {
    action: string;
    outcome: string;
    actor: { type: string; id: string | null; name: string | null; via: string };
  }[];
}

describe('queue dashboard: the OIDC login', () => {
  let issuer: TestIssuer;
  let t: TestApp;

  beforeAll(async () => {
    issuer = await startIssuer(AUDIENCE);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await issuer.registerDashboard(`${base}/admin/auth/callback`);
    t = await startApp({
      PORT: String(port),
      OIDC_ISSUER_URL: issuer.url,
      OIDC_AUDIENCE: AUDIENCE,
      OIDC_CLIENT_ID: DASHBOARD_CLIENT.id,
      OIDC_CLIENT_SECRET: DASHBOARD_CLIENT.secret,
      PUBLIC_BASE_URL: base,
    });
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.stop();
  });

  /** From the dashboard's page to the issuer's login form: every hop. */
  const toLoginForm = (browser: CookieBrowser): Promise<Hop[]> => browser.follow(`${t.url}/admin/queues`);

  /** The form submitted as `user`: the hops from the issuer back through the callback to the dashboard. */
  const submit = (browser: CookieBrowser, form: Hop, user: string): Promise<Hop[]> =>
    browser.follow(form.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user }),
    });

  async function signIn(user: string): Promise<{ browser: CookieBrowser; hops: Hop[] }> {
    const browser = new CookieBrowser();
    const toForm = await toLoginForm(browser);
    const form = toForm[toForm.length - 1];
    expect(form.body).toContain('<form');
    return { browser, hops: [...toForm, ...(await submit(browser, form, user))] };
  }

  const callbackHop = (hops: Hop[]): Hop => {
    const hop = hops.find((h) => h.url.startsWith(`${t.url}/admin/auth/callback`));
    if (!hop) throw new Error(`no callback among ${hops.map((h) => `${h.status} ${h.url}`).join(', ')}`);
    return hop;
  };

  const api = (browser: CookieBrowser, path: string, method = 'GET'): Promise<Hop> =>
    browser.request(`${t.url}${path}`, { method });

  async function auditEntries(action: string): Promise<AuditPage['data']> {
    const res = await t.http
      .get(`/api/v1/admin/audit-events?action=${action}`)
      .set('authorization', `Bearer ${t.adminToken}`);
    expect(res.status).toBe(200);
    return (res.body as AuditPage).data;
  }

  it('sends a browser without a session to the issuer: the code flow with PKCE S256, state, nonce, the scope and the callback', async () => {
    const browser = new CookieBrowser();
    const first = await browser.request(`${t.url}/admin/queues`);
    expect(first.status).toBe(302);
    const discovery = (await (await fetch(`${issuer.url}/.well-known/openid-configuration`)).json()) as {
      authorization_endpoint: string;
    };
    const to = new URL(first.location ?? '');
    expect(`${to.origin}${to.pathname}`).toBe(discovery.authorization_endpoint);
    const params = Object.fromEntries(to.searchParams);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: DASHBOARD_CLIENT.id,
      redirect_uri: `${t.url}/admin/auth/callback`,
      scope: 'openid profile email',
      code_challenge_method: 'S256',
    });
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.state.length).toBeGreaterThanOrEqual(20);
    expect(params.nonce.length).toBeGreaterThanOrEqual(20);
    // Two logins never share their state, nonce or challenge.
    const second = new URL((await new CookieBrowser().request(`${t.url}/admin/queues`)).location ?? '');
    for (const name of ['state', 'nonce', 'code_challenge'])
      expect(second.searchParams.get(name)).not.toBe(params[name]);

    // The dashboard's JSON API is not a page: 401, no redirect.
    const json = await api(browser, QUEUES);
    expect(json.status).toBe(401);
    expect(JSON.parse(json.body).error.code).toBe('unauthorized');
  });

  it('signs the operator in with a session cookie (HttpOnly, SameSite=Lax, Path=/admin, at most 8 h) that opens the dashboard under their name', async () => {
    const { browser, hops } = await signIn('alice');
    const callback = callbackHop(hops);
    expect(callback.status).toBe(302);
    expect(callback.location).toBe(`${t.url}/admin/queues`);
    const line = callback.setCookies.find((c) => c.startsWith('kyc_admin_session='));
    expect(line).toBeDefined();
    const attributes = (line ?? '').split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/admin']));
    expect(attributes).not.toContain('secure');
    const maxAge = Number(attributes.find((a) => a.startsWith('max-age='))?.slice(8));
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(EIGHT_HOURS_S);
    const page = hops[hops.length - 1];
    expect(page.status).toBe(200);
    expect(page.body).toContain('KYC deliveries');

    expect((await api(browser, QUEUES)).status).toBe(200);
    expect((await api(browser, `${QUEUES}/${QUEUE}/pause`, 'PUT')).status).toBe(200);
    expect((await api(browser, `${QUEUES}/${QUEUE}/resume`, 'PUT')).status).toBe(200);
    const [paused] = await auditEntries('dashboard.queue_paused');
    expect(paused.actor).toEqual({ type: 'operator', id: 'alice', name: 'alice@ops.example', via: 'oidc' });
  });

  it('takes the roles from the access token when the ID token has none; a role without the permission is 403 and recorded', async () => {
    const carol = await signIn('carol');
    expect((await api(carol.browser, QUEUES)).status).toBe(200); // compliance reads the dashboard
    const refused = await api(carol.browser, `${QUEUES}/${QUEUE}/pause`, 'PUT');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe('forbidden');

    const dave = await signIn('dave');
    expect((await api(dave.browser, `${QUEUES}/${QUEUE}/pause`, 'PUT')).status).toBe(403);
    const denied = (await auditEntries('auth.denied')).map((e) => `${e.outcome} ${e.actor.id} ${e.actor.via}`);
    expect(denied).toEqual(expect.arrayContaining(['denied carol oidc', 'denied dave oidc']));
    const basic = Buffer.from(`admin:${t.adminToken}`).toString('base64');
    const queues = await t.http.get(QUEUES).set('authorization', `Basic ${basic}`);
    expect((queues.body.queues as { name: string; isPaused: boolean }[]).find((q) => q.name === QUEUE)?.isPaused).toBe(
      false,
    );
  });

  it('sets no session when the callback state does not match, and the login cannot be finished afterwards', async () => {
    const browser = new CookieBrowser();
    const toForm = await toLoginForm(browser);
    // Submit the form but stop before the callback.
    const form = toForm[toForm.length - 1];
    let hop = await browser.request(form.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user: 'alice' }),
    });
    while (hop.location && !hop.location.startsWith(`${t.url}/admin/auth/callback`))
      hop = await browser.request(hop.location);
    const callback = new URL(hop.location ?? '');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'not-the-state-this-browser-was-given');

    const refused = await browser.request(forged.href);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error.code).toBe('unauthorized');
    expect(refused.setCookies.some((c) => c.startsWith('kyc_admin_session='))).toBe(false);
    // The login was used up by the refused callback: the genuine one signs no one in either.
    const late = await browser.request(callback.href);
    expect(late.status).toBe(401);
    expect(browser.cookie(t.url, 'kyc_admin_session')).toBeUndefined();
    expect((await api(browser, QUEUES)).status).toBe(401);
  });

  it('a callback in a browser that did not start the login signs no one in', async () => {
    const { hops } = await signIn('alice');
    const stranger = new CookieBrowser();
    const replay = await stranger.request(callbackHop(hops).url);
    expect(replay.status).toBe(401);
    expect(replay.setCookies.some((c) => c.startsWith('kyc_admin_session='))).toBe(false);
  });

  it('logout ends the session on the server: the old cookie opens nothing', async () => {
    const { browser } = await signIn('alice');
    const cookie = browser.cookie(t.url, 'kyc_admin_session') as string;
    expect((await api(browser, QUEUES)).status).toBe(200);
    const out = await browser.request(`${t.url}/admin/auth/logout`);
    expect(out.status).toBe(200);
    expect(out.setCookies.some((c) => /^kyc_admin_session=;/.test(c) && /max-age=0/i.test(c))).toBe(true);
    const thief = new CookieBrowser();
    thief.setCookie(t.url, 'kyc_admin_session', cookie, '/admin');
    expect((await api(thief, QUEUES)).status).toBe(401);
    expect((await thief.request(`${t.url}/admin/queues`)).status).toBe(302);
  });

  it('keeps the other ways in: Basic break-glass and a Bearer operator key', async () => {
    const basic = Buffer.from(`admin:${t.adminToken}`).toString('base64');
    expect((await t.http.get(QUEUES).set('authorization', `Basic ${basic}`)).status).toBe(200);
    const key = await t.http
      .post('/api/v1/admin/operator-keys')
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ name: 'console', role: 'viewer' });
    expect((await t.http.get(QUEUES).set('authorization', `Bearer ${key.body.key}`)).status).toBe(200);
    // A wrong credential is refused, not sent to the login.
    const wrong = await t.http
      .get('/admin/queues')
      .set('authorization', `Basic ${Buffer.from('admin:x').toString('base64')}`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Basic');
  });
});
