import { Agent, request } from 'node:http';
import type { Variant } from './variants';

/** One response: when its request left (ms from the phase's start), how long it took, its status. */
export interface Sample {
  sentAt: number;
  latency: number;
  status: number;
  /** For a request that opened its connection: when the connection was established (ms from the phase's start). */
  connectedAt?: number;
}

/** Keep-alive client connections to one target, kept across phases or replaced for each. */
export function keepAliveAgent(connections: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
}

function get(url: URL, variant: Variant, agent: Agent, onConnect: (at: number) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: variant.path,
        agent,
        headers: { authorization: `Bearer ${variant.secret}` },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.once('socket', (socket) => {
      if (socket.connecting) socket.once('connect', () => onConnect(performance.now()));
    });
    req.end();
  });
}

/**
 * `connections` closed loops against `baseUrl` for `seconds` through `agent`, each request with
 * the next variant; every response is a sample (a network error counts as status 0).
 */
export async function closedLoop(
  baseUrl: string,
  variants: Variant[],
  agent: Agent,
  connections: number,
  seconds: number,
): Promise<Sample[]> {
  const url = new URL(baseUrl);
  const samples: Sample[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  let next = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < end) {
      const variant = variants[next++ % variants.length] as Variant;
      const sentAt = performance.now();
      let connectedAt: number | undefined;
      const status = await get(url, variant, agent, (at) => (connectedAt = at - start)).catch(() => 0);
      samples.push({ sentAt: sentAt - start, latency: performance.now() - sentAt, status, connectedAt });
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return samples;
}
