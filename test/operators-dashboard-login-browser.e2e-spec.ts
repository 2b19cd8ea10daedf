import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { findChromium, withoutChromium } from './helpers/chromium';
import { createAccount, createVerificationInStatus, type CreatedAccount } from './helpers/factories';
import { DASHBOARD_CLIENT, startIssuer, type TestIssuer } from './helpers/oidc-issuer';
import { waitFor } from './helpers/poll';
import { TestApp, freePort, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const AUDIENCE = 'https://kyc.example/admin';
const QUEUE = 'webhook-deliveries';
const SCREENSHOT_DIR = resolve(process.env.SCREENSHOT_DIR || join(tmpdir(), 'kyc-dashboard-screenshots'));
const chromium = findChromium();

interface EventJson {
  id: string;
  delivery_status: string;
  attempt_count: number;
}

interface AuditJson {
  action: string;
  outcome: string;
  actor: { id: string | null; via: string };
  target: { id: string } | null;
}

describe('queue dashboard: operators signed in with a real browser', () => {
  if (
    withoutChromium(chromium, 'dashboard login browser test', [
      'a viewer sees the Failed tab and is refused Retry; an operator retries, and the trail names both',
    ])
  )
    return;

  let issuer: TestIssuer;
  let t: TestApp;
  let receiver: WebhookReceiver;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    issuer = await startIssuer(AUDIENCE);
    receiver = await WebhookReceiver.start();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await issuer.registerDashboard(`${base}/admin/auth/callback`);
    t = await startApp({
      PORT: String(port),
      APP_ROLE: 'all',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_login_browser`,
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      OIDC_ISSUER_URL: issuer.url,
      OIDC_AUDIENCE: AUDIENCE,
      OIDC_CLIENT_ID: DASHBOARD_CLIENT.id,
      OIDC_CLIENT_SECRET: DASHBOARD_CLIENT.secret,
      PUBLIC_BASE_URL: base,
    });
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox'],
      defaultViewport: { width: 1280, height: 900 },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
    await issuer?.stop();
  });

  async function event(account: CreatedAccount, id: string): Promise<EventJson> {
    const res = await t.http
      .get(`/api/v1/public/kyc/webhook-events/${id}`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(res.status).toBe(200);
    return res.body as EventJson;
  }

  /** A browser of its own (no cookie shared with another operator's), signed in as `user` at the issuer's form. */
  async function signedIn(user: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${t.url}/admin/queues/queue/${QUEUE}?status=failed`);
    expect(page.url().startsWith(`${issuer.url}/interaction/`)).toBe(true);
    await page.type('input[name="user"]', user);
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    // Back on the page first asked for, signed in.
    await page.waitForFunction("document.body.innerText.includes('gave up')");
    expect(page.url()).toBe(`${t.url}/admin/queues/queue/${QUEUE}?status=failed`);
    return { context, page };
  }

  /** Presses Retry on the job's page and returns the status the dashboard's API answered. */
  async function pressRetry(page: Page, jobId: string): Promise<number> {
    await page.goto(`${t.url}/admin/queues/queue/${QUEUE}/${encodeURIComponent(jobId)}`, { waitUntil: 'networkidle0' });
    const answered = page.waitForResponse((r) => r.url().includes('/retry') && r.request().method() === 'PUT');
    // The card's actions are icons whose names show only as tooltips; Retry is the refresh icon.
    await page.locator('[data-base-ui-tooltip-trigger] button:has(svg.lucide-refresh-cw)').click();
    await page.locator('::-p-aria([name="Confirm"][role="button"])').click();
    return (await answered).status();
  }

  it('a viewer sees the Failed tab and is refused Retry; an operator retries, and the trail names both', async () => {
    receiver.respondWith({ status: 500 });
    const account = await createAccount(t, { webhook_url: receiver.url });
    const verification = await createVerificationInStatus(t, account.id, 'processing');
    const [failed] = await waitFor(
      async () =>
        (
          await t.http
            .get(`/api/v1/public/kyc/webhook-events?verification_id=${verification.id}&delivery_status=failed`)
            .set('authorization', `Bearer ${account.secret}`)
        ).body.data as EventJson[],
      (events) => events.length === 1,
      `a failed event of ${verification.id}`,
    );
    const jobId = `${failed.id}:1`;

    const viewer = await signedIn('dave');
    await viewer.page.screenshot({ path: join(SCREENSHOT_DIR, 'login-viewer-failed-tab.png') });
    expect(await pressRetry(viewer.page, jobId)).toBe(403);
    await new Promise((shown) => setTimeout(shown, 500));
    await viewer.page.screenshot({ path: join(SCREENSHOT_DIR, 'login-viewer-retry-refused.png') });
    expect(await event(account, failed.id)).toMatchObject({ delivery_status: 'failed', attempt_count: 3 });

    receiver.respondWith({ status: 200 });
    const operator = await signedIn('alice');
    expect(await pressRetry(operator.page, jobId)).toBe(204);
    await waitFor(
      () => event(account, failed.id),
      (now) => now.delivery_status === 'delivered',
      'the retried event to be delivered',
    );
    await operator.page.goto(`${t.url}/admin/queues/queue/${QUEUE}?status=completed`, { waitUntil: 'networkidle0' });
    await operator.page.screenshot({ path: join(SCREENSHOT_DIR, 'login-operator-retried.png') });

    const trail = await t.http.get('/api/v1/admin/audit-events').set('authorization', `Bearer ${t.adminToken}`);
    const entries = (trail.body.data as AuditJson[]).map(
      (e) => `${e.action} ${e.outcome} ${e.actor.id} ${e.actor.via}`,
    );
    expect(entries).toEqual(
      expect.arrayContaining(['auth.denied denied dave oidc', 'dashboard.job_retried success alice oidc']),
    );

    // Signing out: the cookie leaves the browser and its value opens nothing any more.
    const cookie = (await operator.context.cookies()).find((c) => c.name === 'kyc_admin_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/admin' });
    expect(await operator.page.evaluate('document.cookie')).not.toContain('kyc_admin_session');
    await operator.page.goto(`${t.url}/admin/auth/logout`);
    expect(await operator.page.$eval('body', (body) => body.innerText)).toContain('signed out');
    expect((await operator.context.cookies()).some((c) => c.name === 'kyc_admin_session')).toBe(false);
    const replay = await fetch(`${t.url}/admin/queues/api/queues`, {
      headers: { cookie: `kyc_admin_session=${cookie?.value}` },
    });
    expect(replay.status).toBe(401);
    await viewer.context.close();
    await operator.context.close();
  }, 180_000);
});
