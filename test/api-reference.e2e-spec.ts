/**
 * The API reference page: `npm run docs:api` (also part of `npm run build`) writes it from the
 * OpenAPI document, and the service serves it at /api/reference. It must show every route the
 * served document has, and render in a real browser that can reach nothing but the service.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { CHROMIUM_MISSING, findChromium, inCi } from './helpers/chromium';
import { TestApp, startApp } from './helpers/test-app';

const ROOT = join(__dirname, '..');
const PAGE_DIR = join(ROOT, 'dist', 'api-reference');
const SCREENSHOT = process.env.SCREENSHOT_DIR
  ? join(process.env.SCREENSHOT_DIR, 'api-reference.png')
  : join(ROOT, 'dist', 'test-screenshots', 'api-reference.png');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

type Paths = Record<string, Record<string, unknown>>;
const operations = (paths: Paths) =>
  Object.entries(paths)
    .flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();

describe('API reference at /api/reference', () => {
  let t: TestApp;

  beforeAll(async () => {
    const generated = spawnSync(process.execPath, [join(ROOT, 'dist', 'scripts', 'api-reference.js')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect({ status: generated.status, stderr: generated.stderr }).toEqual({ status: 0, stderr: '' });
    t = await startApp({ QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_api_reference` });
  }, 150_000);

  afterAll(async () => {
    await t?.close();
  });

  it('is generated from the document the service serves: the same operations', async () => {
    const live = (await (await fetch(`${t.url}/api/docs-json`)).json()) as { paths: Paths };
    const page = JSON.parse(readFileSync(join(PAGE_DIR, 'openapi.json'), 'utf8')) as { paths: Paths };
    expect(operations(page.paths)).toEqual(operations(live.paths));
    expect(operations(live.paths).length).toBeGreaterThan(10);
  });

  it('is served as one self-contained HTML page: no script, style or font from another host', async () => {
    const res = await fetch(`${t.url}/api/reference`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const html = await res.text();
    expect(html).toContain('<title>KYC API reference</title>');
    const remote = [
      ...html.matchAll(
        /<script[^>]+src=[^>]*>|<link[^>]+href=["']?(?:https?:)?\/\/[^>]*>|@import\s+url\(\s*["']?https?:[^)]*\)/gi,
      ),
    ];
    expect(remote.map((m) => m[0])).toEqual([]);
    expect((await fetch(`${t.url}/api/reference`, { method: 'HEAD' })).status).toBe(200);
  });

  const chromium = findChromium();
  if (!chromium) {
    if (inCi()) {
      it('has a Chromium to run in', () => {
        throw new Error(`CI must render the API reference in a browser: ${CHROMIUM_MISSING}`);
      });
    } else {
      it.skip('renders in a browser that can reach nothing but the service', () => undefined);
    }
    return;
  }

  it('renders in a browser that can reach nothing but the service', async () => {
    const browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox'],
      defaultViewport: { width: 1280, height: 900 },
    });
    try {
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      const errors: string[] = [];
      await page.setRequestInterception(true);
      page.on('request', (request) => {
        const url = request.url();
        if (url.startsWith(t.url) || url.startsWith('data:') || url.startsWith('blob:')) return void request.continue();
        elsewhere.push(url);
        void request.abort();
      });
      page.on('pageerror', (error) => errors.push(String(error)));
      // The browser asks for /favicon.ico by itself; the page asks for nothing else.
      page.on('response', (response) => {
        const failed = response.status() >= 400 && !response.url().endsWith('/favicon.ico');
        if (failed) errors.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(`${t.url}/api/reference`, { waitUntil: 'networkidle0', timeout: 60_000 });
      const text = await page.$eval('body', (body) => body.innerText);
      expect(text).toContain('KYC verification lookup and result delivery');
      // Redoc's script runs the page: a group of the sidebar opens on a click and lists its operations.
      const [group] = await page.$$('xpath/.//*[normalize-space(text())="public"]');
      await group.click();
      await page.waitForFunction(
        (body) => body?.innerText.includes('Redeliver one event'),
        { timeout: 15_000 },
        await page.$('body'),
      );
      mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
      expect({ elsewhere, errors }).toEqual({ elsewhere: [], errors: [] });
    } finally {
      await browser.close();
    }
  });
});
