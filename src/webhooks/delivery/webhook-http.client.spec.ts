import type { LookupAddress, LookupOptions } from 'node:dns';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookHttpClient, guardedLookup } from 'src/webhooks/delivery/webhook-http.client';

function resolverOf(addresses: LookupAddress[]) {
  return (
    _host: string,
    _options: LookupOptions & { all: true },
    callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => callback(null, addresses);
}

function run(
  addresses: LookupAddress[],
  all: boolean,
): Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[] }> {
  return new Promise((resolve) =>
    guardedLookup(resolverOf(addresses))('hooks.example.com', { all }, (err, address) => resolve({ err, address })),
  );
}

describe('guardedLookup', () => {
  it.each([
    ['127.0.0.1', 4],
    ['10.0.0.1', 4],
    ['169.254.169.254', 4],
    ['100.64.0.1', 4],
    ['0.0.0.0', 4],
    ['224.0.0.1', 4],
    ['::1', 6],
    ['::ffff:127.0.0.1', 6],
    ['fe80::1', 6],
    ['fc00::1', 6],
    ['::7f00:1', 6],
    ['::a9fe:a9fe', 6],
    ['::a00:1', 6],
    ['64:ff9b::7f00:1', 6],
    ['2002:7f00:1::', 6],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 6],
  ])('refuses a name that resolves to %s', async (address, family) => {
    const { err } = await run([{ address, family }], false);
    expect(err?.message).toBe('blocked: private address');
    expect(err?.code).toBe('EBLOCKED');
  });

  it('refuses when any of several answers is private (no picking the public one)', async () => {
    const { err } = await run(
      [
        { address: '93.184.216.34', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ],
      true,
    );
    expect(err?.code).toBe('EBLOCKED');
  });

  it('passes public unicast answers through in the form asked for', async () => {
    const answers = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ];
    expect(await run(answers, true)).toEqual({ err: null, address: answers });
    expect((await run(answers, false)).address).toBe('93.184.216.34');
  });

  it('passes DNS errors through', async () => {
    const failing = (
      _h: string,
      _o: LookupOptions & { all: true },
      callback: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void,
    ) => callback(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []);
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(failing)('nope.invalid', {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe('ENOTFOUND');
  });
});

describe('WebhookHttpClient.post', () => {
  const TIMEOUT_MS = 600;
  let server: Server;
  let client: WebhookHttpClient;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  let url: string;

  beforeEach(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    client = new WebhookHttpClient({ timeoutMs: TIMEOUT_MS, allowPrivate: true });
  });

  afterEach(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('settles on a 2xx status line and gives a trickling body a bound of its own', async () => {
    handler = (req, res) => {
      req.resume();
      res.writeHead(200);
      res.flushHeaders();
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('.')), 100);
    };
    const result = await client.post(url, {}, '{}');
    expect(result).toMatchObject({ responseStatus: 200, error: null });
    expect(result.responseBody).toMatch(/^\.*$/);
    expect(result.durationMs).toBeLessThanOrEqual(TIMEOUT_MS + 100);
  });

  it('keeps a 2xx whose body is cut off by a reset', async () => {
    handler = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial', () => setTimeout(() => res.socket?.resetAndDestroy(), 20));
    };
    expect(await client.post(url, {}, '{}')).toMatchObject({
      responseStatus: 200,
      error: null,
      responseBody: 'partial',
    });
  });

  it('sends again, once, on a new connection when a reused keep-alive one is reset before any answer', async () => {
    const sockets: unknown[] = [];
    handler = (req, res) => {
      req.resume();
      sockets.push(req.socket);
      // The second request comes on the first one's connection: reset, as by an endpoint that had just
      // closed it for being idle.
      if (sockets.length === 2) req.socket.resetAndDestroy();
      else res.writeHead(204).end();
    };
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
    expect(sockets).toHaveLength(3);
    expect(sockets[1]).toBe(sockets[0]);
    expect(sockets[2]).not.toBe(sockets[0]);
  });

  it('reports a reset of a new connection as an attempt that failed, sending it once', async () => {
    let calls = 0;
    handler = (req) => {
      req.resume();
      calls += 1;
      req.socket.resetAndDestroy();
    };
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: null, error: 'connection reset' });
    expect(calls).toBe(1);
  });

  it('sends again only once: a reset of the new connection too is an attempt that failed', async () => {
    let calls = 0;
    handler = (req, res) => {
      req.resume();
      calls += 1;
      if (calls === 1) res.writeHead(204).end();
      else req.socket.resetAndDestroy();
    };
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: null, error: 'connection reset' });
    expect(calls).toBe(3);
  });

  it('times out in the response phase on a reused keep-alive connection', async () => {
    let calls = 0;
    handler = (req, res) => {
      req.resume();
      calls += 1;
      if (calls === 1) res.writeHead(204).end();
    };
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
    expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: null, error: 'timeout: response' });
  });

  it('names a redirect, which it does not follow', async () => {
    handler = (req, res) => {
      req.resume();
      res.writeHead(308, { location: '/elsewhere' }).end();
    };
    expect(await client.post(url, {}, '{}')).toMatchObject({
      responseStatus: 308,
      error: 'redirect not followed (HTTP 308)',
    });
  });

  it('names a refused connection', async () => {
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const { port } = gone.address() as AddressInfo;
    await new Promise((resolve) => gone.close(resolve));
    expect(await client.post(`http://127.0.0.1:${port}/hook`, {}, '{}')).toMatchObject({
      responseStatus: null,
      error: 'connection refused',
    });
  });
});
