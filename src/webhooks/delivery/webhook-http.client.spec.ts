import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { WebhookHttpClient } from 'src/webhooks/delivery/webhook-http.client';
import { neverAcceptingPort } from '../../../test/helpers/never-accepting-port';

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

  it('times out in the connect phase when the new connection of a send again never connects', async () => {
    // A bare HTTP/1.1 endpoint: answers the first request kept alive, resets the connection at the second.
    const endpoint = createTcpServer((socket) => {
      let requests = 0;
      socket.on('data', () => {
        requests += 1;
        if (requests === 1) socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
        else socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const { port } = endpoint.address() as AddressInfo;
    const target = `http://127.0.0.1:${port}/hook`;
    expect(await client.post(target, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
    // The port is then held by a process that never accepts, its accept queue kept full: the new
    // connection's SYN is dropped, and its connect never completes. (The endpoint's listener closes at
    // once; close's callback would wait for the kept-alive connection to end.)
    endpoint.close();
    const stuck = await neverAcceptingPort(port);
    try {
      expect(await client.post(target, {}, '{}')).toMatchObject({ responseStatus: null, error: 'timeout: connect' });
    } finally {
      stuck.close();
    }
  });

  describe('kept-alive connections', () => {
    const sockets: unknown[] = [];
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    beforeEach(() => {
      sockets.length = 0;
      handler = (req, res) => {
        req.resume();
        sockets.push(req.socket);
        res.writeHead(204).end();
      };
    });

    it('closes one left idle for longer than its bound, instead of reusing it later', async () => {
      client.close();
      client = new WebhookHttpClient({ timeoutMs: TIMEOUT_MS, allowPrivate: true, idleSocketMs: 200 });
      await client.post(url, {}, '{}');
      await client.post(url, {}, '{}');
      await pause(400);
      expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
      expect(sockets[1]).toBe(sockets[0]);
      expect(sockets[2]).not.toBe(sockets[0]);
    });

    it("closes one a second before the endpoint's announced Keep-Alive timeout", async () => {
      // Node's server announces `Keep-Alive: timeout=2` and closes the connection after 2 s idle.
      server.keepAliveTimeout = 2_000;
      await client.post(url, {}, '{}');
      await pause(1_300);
      expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
      expect(sockets[1]).not.toBe(sockets[0]);
    });

    it('does not cut a request on a reused connection that waits longer than the idle bound', async () => {
      client.close();
      client = new WebhookHttpClient({ timeoutMs: TIMEOUT_MS, allowPrivate: true, idleSocketMs: 100 });
      await client.post(url, {}, '{}');
      handler = (req, res) => {
        req.resume();
        sockets.push(req.socket);
        setTimeout(() => res.writeHead(204).end(), 400);
      };
      expect(await client.post(url, {}, '{}')).toMatchObject({ responseStatus: 204, error: null });
      expect(sockets[1]).toBe(sockets[0]);
    });
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
