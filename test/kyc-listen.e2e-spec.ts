import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { TestApp, freePort, startApp } from './helpers/test-app';
import { WebhookReceiver, verifySignature } from './helpers/webhook-receiver';

const LISTEN_JS = join(__dirname, '..', 'dist', 'src', 'listen', 'main.js');

interface Listener {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
  /** Lines of stdout so far. */
  lines(): string[];
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

function listen(args: string[], env: Record<string, string> = {}): Listener {
  const child = spawn(process.execPath, [LISTEN_JS, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = () => stdout.join('').split('\n').filter(Boolean);
  return {
    child,
    stdout,
    stderr,
    exited,
    lines,
    async waitForOutput(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(stdout.join('') + stderr.join(''))) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in: ${stdout.join('')}${stderr.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

describe('kyc-listen', () => {
  let t: TestApp;
  let local: WebhookReceiver;
  let account: CreatedAccount;
  let stateDir: string;
  const running: Listener[] = [];

  const start = (extra: string[] = [], forwardTo = local.url): Listener => {
    const listener = listen(
      ['--base-url', t.url, '--forward-to', forwardTo, '--state-file', join(stateDir, 'state.json'), ...extra],
      { KYC_WEBHOOK_SECRET: account.secret },
    );
    running.push(listener);
    return listener;
  };

  /** `count` status changes (pending → processing): their verification ids, in order. */
  async function changes(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const v = await createVerification(t, account.id);
      await transition(t, v.id, { status: 'processing' });
      ids.push(v.id);
    }
    return ids;
  }

  const forwardedVerifications = (): string[] =>
    local.requests.map((r) => (JSON.parse(r.body) as { data: { verification: { id: string } } }).data.verification.id);

  beforeAll(async () => {
    t = await startApp({ APP_ROLE: 'api' });
    local = await WebhookReceiver.start();
  });

  beforeEach(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'kyc-listen-'));
    // An account with no webhook URL: the laptop with no tunnel.
    account = await createAccount(t);
    local.requests.splice(0);
    local.respondWith({ status: 200 });
  });

  afterEach(async () => {
    for (const listener of running.splice(0)) {
      listener.child.kill('SIGKILL');
      await listener.exited;
    }
  });

  afterAll(async () => {
    await local?.close();
    await t?.close();
  });

  it('forwards each event signed (verified by standardwebhooks), one line each; Ctrl-C prints the counts', async () => {
    const listener = start();
    await listener.waitForOutput(/connected/);
    const [id] = await changes(1);
    const test = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', `Bearer ${account.secret}`)
      .send({ status: 'rejected' });
    expect(test.status).toBe(202);
    await local.waitFor((requests) => requests.length === 2, 10_000);
    for (const request of local.requests) expect(verifySignature(account.secret, request)).toBeTruthy();
    local.respondWith({ status: 500 });
    await changes(1);
    await listener.waitForOutput(/ 500 in \d+ ms/);
    const lines = listener.lines();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      new RegExp(`^\\S+Z  verification.status_changed  ${id}  pending → processing  200 in \\d+ ms$`),
    );
    expect(lines[1].split('  ').slice(1)).toEqual([
      'verification.status_changed (test)',
      expect.any(String),
      'processing → rejected',
      expect.stringMatching(/^200 in \d+ ms$/),
    ]);
    listener.child.kill('SIGINT');
    expect(await listener.exited).toBe(0);
    expect(listener.lines().at(-1)).toBe('forwarded 3 events, 2 answered 2xx');
    const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as { last_event_id: string };
    expect(state.last_event_id).toBe(JSON.parse(local.requests[2].body).id);
  });

  it('reports a local server that is down on the event line and goes on', async () => {
    const closedPort = await freePort();
    const listener = start([], `http://127.0.0.1:${closedPort}/hook`);
    await listener.waitForOutput(/connected/);
    await changes(2);
    await listener.waitForOutput(/(local server down.*\n.*){2}/);
    expect(listener.lines()).toHaveLength(2);
    expect(listener.lines()[0].split('  ').slice(3)).toEqual([
      'pending → processing',
      expect.stringMatching(/^local server down \(connection refused\) in \d+ ms$/),
    ]);
  });

  it('loses nothing when it is killed mid-burst and started again: it resumes from its state file', async () => {
    const first = start();
    await first.waitForOutput(/connected/);
    const burst = changes(30);
    await local.waitFor((requests) => requests.length >= 8, 20_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = start();
    const created = await burst;
    await local.waitFor(() => created.every((id) => forwardedVerifications().includes(id)), 20_000);
    // At least once: the event in flight at the kill may come twice, never any other.
    expect(new Set(forwardedVerifications()).size).toBe(30);
    expect(local.requests.length).toBeLessThanOrEqual(31);
    await second.waitForOutput(/resuming after/);
  });

  it('loses nothing across a restart of the service: it reconnects and resumes', async () => {
    const port = await freePort();
    let service = await startApp({ APP_ROLE: 'api', PORT: String(port) });
    const listener = listen(
      ['--base-url', service.url, '--forward-to', local.url, '--state-file', join(stateDir, 'state.json')],
      { KYC_WEBHOOK_SECRET: account.secret },
    );
    running.push(listener);
    await listener.waitForOutput(/connected/);
    const before = await changes(2);
    await local.waitFor((requests) => requests.length === 2, 10_000);
    await service.close();
    const during = await changes(3);
    service = await startApp({ APP_ROLE: 'api', PORT: String(port) });
    try {
      await local.waitFor(() => [...before, ...during].every((id) => forwardedVerifications().includes(id)), 20_000);
      expect(forwardedVerifications()).toEqual([...before, ...during]);
    } finally {
      await service.close();
    }
  });

  it.each([
    [['--forward-to', 'http://127.0.0.1:1/'], '--base-url'],
    [['--base-url', 'http://127.0.0.1:1'], '--forward-to'],
    [['--base-url', 'nope', '--forward-to', 'http://127.0.0.1:1/'], '--base-url'],
    [['--base-url', 'http://127.0.0.1:1', '--forward-to', 'http://127.0.0.1:1/', '--since', 'x'], '--since'],
    [['--base-url', 'http://127.0.0.1:1', '--forward-to', 'http://127.0.0.1:1/', '--bogus', 'x'], '--bogus'],
  ])('refuses %j with one line naming %s and exit 2', async (args, name) => {
    const listener = listen(args, { KYC_WEBHOOK_SECRET: 'whsec_' + Buffer.alloc(32).toString('base64') });
    expect(await listener.exited).toBe(2);
    const output = (listener.stdout.join('') + listener.stderr.join('')).trim().split('\n');
    expect(output).toHaveLength(1);
    expect(output[0]).toContain(name);
  });

  it('refuses a missing secret with exit 2 naming --secret', async () => {
    const listener = listen(['--base-url', 'http://127.0.0.1:1', '--forward-to', 'http://127.0.0.1:1/'], {
      KYC_WEBHOOK_SECRET: '',
    });
    expect(await listener.exited).toBe(2);
    expect(listener.stderr.join('')).toMatch(/--secret/);
  });
});
