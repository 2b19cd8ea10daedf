import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { findChromium, withoutChromium } from './helpers/chromium';
import { createAccount, createVerificationInStatus } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

interface EventJson {
  id: string;
  type: string;
  delivery_status: string;
  attempt_count: number;
}

const QUEUE = 'webhook-deliveries';
const REASON = 'gave up after 3 attempts: HTTP 500';
const JOB_LINK = `a[href*="/queue/${QUEUE}/"]`;
const SCREENSHOT_DIR = resolve(process.env.SCREENSHOT_DIR || join(tmpdir(), 'kyc-dashboard-screenshots'));
const chromium = findChromium();

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A field of the job data as bull-board's JSON tree prints it: `eventId:"…"` or `cycle:1`. */
function dataField(name: string, value: string | number): RegExp {
  const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
  return new RegExp(`${name}:\\s*${escapeRegExp(shown)}`);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** A page of another site (`localhost` against the service's `127.0.0.1`) serving `html`. */
async function otherSite(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((listening) => server.listen(0, listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/`,
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        // The browser keeps its connection alive; close would wait for it.
        server.closeAllConnections();
      }),
  };
}

function bodyText(page: Page): Promise<string> {
  return page.$eval('body', (body) => body.innerText);
}

/** The open tab's content of the (only) job card on the page. */
function panelText(page: Page): Promise<string> {
  return page.$eval('[role="tabpanel"]', (panel) => panel.innerText);
}

/** Waits until `read` shows `text`; on a time-out the error carries what the page showed instead. */
async function waitForText(page: Page, read: (page: Page) => Promise<string>, text: string): Promise<string> {
  let shown = '';
  try {
    return await until(`the page to show "${text}"`, async () => {
      shown = await read(page).catch(() => '');
      return shown.includes(text) ? shown : undefined;
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; it shows:\n${shown}`, { cause: error });
  }
}

/** Clicks a job card tab until it is the selected one (bull-board may re-render the card just after it loads). */
async function openTab(page: Page, name: string): Promise<void> {
  await until(`the ${name} tab to open`, async () => {
    await page.locator(`::-p-aria([name="${name}"][role="tab"])`).click();
    await new Promise((done) => setTimeout(done, 200));
    const selected = await page.$$eval('[role="tab"][aria-selected="true"]', (tabs) =>
      tabs.map((tab) => tab.textContent?.trim()),
    );
    return selected.includes(name) ? true : undefined;
  });
}

async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOT_DIR, name);
  await page.screenshot({ path });
  return path;
}

describe('queue dashboard in a real browser', () => {
  if (
    withoutChromium(chromium, 'queue dashboard browser test', [
      'shows a dead delivery on the Failed tab with its reason and data, and its attempts in the job log',
      'refuses a form that a page of another site auto-submits with the cached credentials, and Retry on the dashboard still works',
    ])
  )
    return;

  let t: TestApp | undefined;
  let receiver: WebhookReceiver | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    receiver = await WebhookReceiver.start();
    t = await startApp({
      APP_ROLE: 'all',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_dashboard_browser`,
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    });
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox'],
      defaultViewport: { width: 1280, height: 900 },
    });
  }, 120_000);

  afterAll(async () => {
    const closed = await Promise.allSettled([browser?.close(), t?.close(), receiver?.close()]);
    const failure = closed.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  });

  /** Polls the account's delivery log until the verification's one failed event shows. */
  async function failedEvent(app: TestApp, secret: string, verificationId: string): Promise<EventJson> {
    const events = await until(`a failed event of verification ${verificationId}`, async () => {
      const res = await app.http
        .get(`/api/v1/public/kyc/webhook-events?verification_id=${verificationId}&delivery_status=failed`)
        .set('authorization', `Bearer ${secret}`);
      expect(res.status).toBe(200);
      const failed = res.body.data as EventJson[];
      return failed.length > 0 ? failed : undefined;
    });
    expect(events).toHaveLength(1);
    return events[0];
  }

  it('shows a dead delivery on the Failed tab with its reason and data, and its attempts in the job log', async () => {
    const app = t as TestApp;
    const hook = receiver as WebhookReceiver;
    // pending → processing is delivered, processing → approved dies: the Failed tab holds exactly one job.
    hook.respondWith((request) => {
      const body = JSON.parse(request.body) as { data: { verification: { status: string } } };
      return { status: body.data.verification.status === 'approved' ? 500 : 200 };
    });
    const account = await createAccount(app, { webhook_url: hook.url });
    const verification = await createVerificationInStatus(app, account.id, 'approved');
    const event = await failedEvent(app, account.secret, verification.id);
    expect(event).toMatchObject({ type: 'verification.status_changed', attempt_count: 3 });

    const page = await (browser as Browser).newPage();
    page.setDefaultTimeout(10_000);
    const shots: string[] = [];
    try {
      await page.authenticate({ username: 'admin', password: app.adminToken });
      await page.goto(`${app.url}/admin/queues/queue/${QUEUE}?status=failed`, { waitUntil: 'networkidle0' });
      expect(await waitForText(page, panelText, REASON)).toContain(REASON);
      expect(await page.$$(JOB_LINK)).toHaveLength(1);
      expect(await bodyText(page)).toContain('verification.status_changed');
      shots.push(await screenshot(page, 'queue-dashboard-failed.png'));

      await openTab(page, 'Data');
      const data = await panelText(page);
      expect(data).toMatch(dataField('eventId', event.id));
      expect(data).toMatch(dataField('cycle', 1));
      expect(data).toMatch(dataField('accountId', account.id));
      expect(data).toMatch(dataField('verificationId', verification.id));
      expect(data).toMatch(dataField('change', 'processing → approved'));
      expect(data).toMatch(dataField('target', `127.0.0.1:${hook.port}`));
      shots.push(await screenshot(page, 'queue-dashboard-job-data.png'));

      await page.locator(JOB_LINK).click();
      await until('the job page to open', async () => (page.url().includes(`/queue/${QUEUE}/`) ? true : undefined));
      await openTab(page, 'Logs');
      const logs = await waitForText(page, panelText, 'gave up');
      const lines = logs
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.startsWith('attempt'));
      expect(lines).toEqual([
        expect.stringMatching(/^attempt 1\/3 · HTTP 500 · \d+ ms · next in \d+ ms$/),
        expect.stringMatching(/^attempt 2\/3 · HTTP 500 · \d+ ms · next in \d+ ms$/),
        expect.stringMatching(/^attempt 3\/3 · HTTP 500 · \d+ ms · gave up$/),
      ]);
      // The schedule's 200 ms with its ±20% jitter: the wait the worker actually chose.
      for (const line of lines.slice(0, 2)) {
        const wait = Number(/next in (\d+) ms$/.exec(line)?.[1]);
        expect(wait).toBeGreaterThanOrEqual(160);
        expect(wait).toBeLessThanOrEqual(240);
      }
      shots.push(await screenshot(page, 'queue-dashboard-job-logs.png'));
    } catch (error) {
      const path = join(SCREENSHOT_DIR, 'queue-dashboard-failure.png');
      await page.screenshot({ path }).catch(() => undefined);
      console.warn(`queue dashboard browser test failed; the page it saw: ${path}`);
      throw error;
    }
    console.log(`queue dashboard screenshots saved:\n${shots.map((path) => `  ${path}`).join('\n')}`);
  }, 180_000);

  /** Every job of the delivery queue, whatever its state, as the dashboard counts them. */
  async function jobTotal(app: TestApp): Promise<number> {
    const res = await fetch(`${app.url}/admin/queues/api/queues`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${app.adminToken}`).toString('base64')}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    const counts = body.queues.find((queue) => queue.name === QUEUE)?.counts ?? {};
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  it('refuses a form that a page of another site auto-submits with the cached credentials, and Retry on the dashboard still works', async () => {
    const app = t as TestApp;
    const hook = receiver as WebhookReceiver;
    hook.respondWith({ status: 500 });
    const account = await createAccount(app, { webhook_url: hook.url });
    const verification = await createVerificationInStatus(app, account.id, 'processing');
    const event = await failedEvent(app, account.secret, verification.id);
    const addUrl = `${app.url}/admin/queues/api/queues/${QUEUE}/add`;
    const attacker = await otherSite(
      `<!doctype html><form id="f" method="POST" action="${addUrl}"></form>` +
        `<script>document.getElementById('f').submit()</script>`,
    );

    const page = await (browser as Browser).newPage();
    page.setDefaultTimeout(10_000);
    try {
      // The operator is logged in to the dashboard: the browser answers its Basic challenge by itself.
      await page.authenticate({ username: 'admin', password: app.adminToken });
      await page.goto(`${app.url}/admin/queues/queue/${QUEUE}?status=failed`, { waitUntil: 'networkidle0' });
      await waitForText(page, panelText, 'gave up');
      const before = await jobTotal(app);

      const sent = page.waitForRequest((request) => request.url() === addUrl && request.method() === 'POST');
      const answered = page.waitForResponse((response) => response.url() === addUrl && response.status() !== 401);
      await page.goto(attacker.url);
      const [request, response] = await Promise.all([sent, answered]);
      expect(request.headers().origin).toBe(new URL(attacker.url).origin);
      expect(response.status()).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      expect(await jobTotal(app)).toBe(before);

      // The dashboard's own page: Retry on the failed job redelivers it.
      hook.respondWith({ status: 200 });
      const jobId = encodeURIComponent(`${event.id}:1`);
      await page.goto(`${app.url}/admin/queues/queue/${QUEUE}/${jobId}`, { waitUntil: 'networkidle0' });
      // The card's actions are icons whose names show only as tooltips; Retry is the refresh icon.
      await page.locator('[data-base-ui-tooltip-trigger] button:has(svg.lucide-refresh-cw)').click();
      await page.locator('::-p-aria([name="Confirm"][role="button"])').click();
      const delivered = await until(`event ${event.id} to be delivered after Retry`, async () => {
        const res = await app.http
          .get(`/api/v1/public/kyc/webhook-events/${event.id}`)
          .set('authorization', `Bearer ${account.secret}`);
        expect(res.status).toBe(200);
        return (res.body as EventJson).delivery_status === 'delivered' ? (res.body as EventJson) : undefined;
      });
      expect(delivered.attempt_count).toBe(4);
    } catch (error) {
      const path = join(SCREENSHOT_DIR, 'queue-dashboard-csrf-failure.png');
      await page.screenshot({ path }).catch(() => undefined);
      console.warn(`queue dashboard browser test failed; the page it saw: ${path}`);
      throw error;
    } finally {
      await page.close();
      await attacker.close();
    }
  }, 180_000);
});
