import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { createAccount, createVerification, transition } from './helpers/factories';
import { neverAcceptingPort } from './helpers/never-accepting-port';
import { TestApp, freePort, startApp } from './helpers/test-app';
import { TestCertificates, makeTestCertificates } from './helpers/tls-certs';

interface AttemptJson {
  response_status: number | null;
  duration_ms: number;
  error: string | null;
}

interface EventJson {
  id: string;
  delivery_status: string;
  attempt_count: number;
  last_error: string | null;
  next_attempt_at?: string | null;
  attempts?: AttemptJson[];
}

const TIMEOUT_MS = 1_500;

/**
 * What a client reads in `last_error` when its endpoint misbehaves: real receivers on 127.0.0.1,
 * plain and TLS (certificates from a throwaway CA the service trusts through NODE_EXTRA_CA_CERTS).
 */
describe('webhook delivery against misbehaving receivers', () => {
  let t: TestApp;
  let certs: TestCertificates;
  const servers: net.Server[] = [];
  const sockets = new Set<net.Socket>();

  async function listen<T extends net.Server>(server: T): Promise<string> {
    server.on('connection', (socket: net.Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }

  const httpReceiver = (handler: http.RequestListener) => listen(http.createServer(handler));
  const httpsReceiver = (options: https.ServerOptions) =>
    listen(https.createServer(options, (_req, res) => res.writeHead(200).end('ok')));

  beforeAll(async () => {
    certs = makeTestCertificates();
    t = await startApp({
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_receiver_errors`,
      NODE_EXTRA_CA_CERTS: certs.caPath,
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await t.close();
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    certs.remove();
  });

  /** Sends one event to `url` and returns it once its first attempt is recorded. */
  async function firstAttempt(url: string): Promise<EventJson> {
    const account = await createAccount(t, { webhook_url: url });
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = await t.http
        .get(`/api/v1/public/kyc/webhook-events?verification_id=${v.id}`)
        .set('authorization', `Bearer ${account.secret}`);
      const [summary] = list.body.data as EventJson[];
      if (summary?.attempt_count >= 1) {
        const detail = await t.http
          .get(`/api/v1/public/kyc/webhook-events/${summary.id}`)
          .set('authorization', `Bearer ${account.secret}`);
        return detail.body as EventJson;
      }
      if (Date.now() > deadline) throw new Error(`no attempt to ${url}: ${JSON.stringify(list.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function expectFirstError(url: string, error: string): Promise<void> {
    const event = await firstAttempt(url);
    expect(event.attempts?.[0]).toMatchObject({ response_status: null, error });
    expect(event.last_error).toBe(error);
  }

  it('delivers to an HTTPS receiver whose certificate the service trusts', async () => {
    const event = await firstAttempt(`https://${await httpsReceiver(certs.valid)}/hook`);
    expect(event).toMatchObject({ delivery_status: 'delivered', attempt_count: 1, last_error: null });
  });

  it.each([
    ['a certificate for another name', 'wrongName', /^tls: ERR_TLS_CERT_ALTNAME_INVALID .*127\.0\.0\.1/],
    ['a self-signed certificate', 'selfSigned', /^tls: DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate$/],
    ['an expired certificate', 'expired', /^tls: CERT_HAS_EXPIRED certificate has expired$/],
  ] as const)('names the TLS error of %s', async (_what, cert, text) => {
    const event = await firstAttempt(`https://${await httpsReceiver(certs[cert])}/hook`);
    expect(event.attempts?.[0].response_status).toBeNull();
    expect(event.attempts?.[0].error).toMatch(text);
    expect(event.last_error).toMatch(text);
  });

  it('names the TLS error of a receiver that speaks TLS 1.1 only', async () => {
    const host = await httpsReceiver({
      ...certs.valid,
      minVersion: 'TLSv1.1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT@SECLEVEL=0',
    });
    const event = await firstAttempt(`https://${host}/hook`);
    expect(event.last_error).toBe('tls: ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION tlsv1 alert protocol version');
  });

  it('names the TLS error of a plain HTTP server behind an https URL', async () => {
    const host = await httpReceiver((_req, res) => res.writeHead(200).end());
    await expectFirstError(`https://${host}/hook`, 'tls: ERR_SSL_WRONG_VERSION_NUMBER wrong version number');
  });

  it('times out in the TLS phase on a handshake that never completes', async () => {
    const host = await listen(net.createServer(() => undefined));
    const event = await firstAttempt(`https://${host}/hook`);
    expect(event.attempts?.[0]).toMatchObject({ response_status: null, error: 'timeout: tls' });
    expect(event.attempts?.[0].duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  });

  it('times out in the connect phase on a port whose connections are never accepted', async () => {
    const stuck = await neverAcceptingPort();
    try {
      await expectFirstError(`http://127.0.0.1:${stuck.port}/hook`, 'timeout: connect');
    } finally {
      stuck.close();
    }
  });

  it('times out in the response phase on a receiver that never answers', async () => {
    await expectFirstError(`http://${await httpReceiver(() => undefined)}/hook`, 'timeout: response');
  });

  it('delivers once on a 200 whose body trickles in a byte every 200 ms', async () => {
    const host = await httpReceiver((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed || sent === 50) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write('.');
        sent += 1;
      }, 200);
    });
    const event = await firstAttempt(`http://${host}/hook`);
    expect(event).toMatchObject({ delivery_status: 'delivered', attempt_count: 1, last_error: null });
    expect(event.attempts).toEqual([expect.objectContaining({ response_status: 200, error: null })]);
    expect(event.attempts?.[0].duration_ms).toBeLessThan(TIMEOUT_MS);
  });

  it('delivers on a 200 cut off by a reset in its body', async () => {
    const host = await httpReceiver((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('partial', () => setTimeout(() => res.socket?.resetAndDestroy(), 50));
    });
    const event = await firstAttempt(`http://${host}/hook`);
    expect(event).toMatchObject({ delivery_status: 'delivered', attempt_count: 1, last_error: null });
  });

  it('does not follow a 301 and says so', async () => {
    const host = await httpReceiver((req, res) => {
      req.resume();
      res.writeHead(301, { location: '/elsewhere' }).end();
    });
    const event = await firstAttempt(`http://${host}/hook`);
    expect(event.attempts?.[0]).toMatchObject({ response_status: 301, error: 'redirect not followed (HTTP 301)' });
    expect(event.last_error).toBe('redirect not followed (HTTP 301)');
  });

  it('says a 410 means the endpoint is gone: the event is held, not retried', async () => {
    const host = await httpReceiver((req, res) => {
      req.resume();
      res.writeHead(410).end();
    });
    const event = await firstAttempt(`http://${host}/hook`);
    expect(event.attempts?.[0]).toMatchObject({ response_status: 410, error: 'HTTP 410 (endpoint gone)' });
    expect(event).toMatchObject({
      last_error: 'HTTP 410 (endpoint gone)',
      delivery_status: 'held',
      next_attempt_at: null,
    });
  });

  it('says connection refused for a port nobody listens on', async () => {
    await expectFirstError(`http://127.0.0.1:${await freePort()}/hook`, 'connection refused');
  });

  it('says connection reset for a receiver that resets before answering', async () => {
    const host = await httpReceiver((req) => {
      req.resume();
      req.socket.resetAndDestroy();
    });
    await expectFirstError(`http://${host}/hook`, 'connection reset');
  });

  it('says which DNS error a host that does not resolve got', async () => {
    await expectFirstError('http://hooks.kyc-test.invalid/hook', 'dns: ENOTFOUND');
  });
});
