import { Agent, request } from 'node:http';

/**
 * A keep-alive HTTP client for the drain and rolling-restart scenarios: one request at a time on a
 * lane's own agent, where a connection error is an outcome to count, not a throw.
 */

export interface Answer {
  method: string;
  status: number;
  connection: string | undefined;
  body: Record<string, unknown>;
  sentAt: number;
  answeredAt: number;
}

export type Outcome = Answer | { error: string; sentAt: number };

/** One request on a lane's own keep-alive agent; a connection error is an outcome, not a throw. */
export function send(
  agent: Agent,
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Outcome> {
  const sentAt = Date.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      `${base}${path}`,
      {
        method,
        agent,
        timeout: 30_000,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, sentAt }));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: Record<string, unknown>;
          try {
            parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          } catch {
            parsed = { raw: text };
          }
          resolve({
            method,
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            body: parsed,
            sentAt,
            answeredAt: Date.now(),
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, sentAt }));
    req.end(payload);
  });
}

/** `503x12/200x1`: how many of each value, most frequent first. */
export function tally(values: readonly number[]): string {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([value, count]) => `${value}x${count}`);
  return parts.join('/') || 'none';
}

export const isAnswer = (outcome: Outcome): outcome is Answer => 'status' in outcome;
export const CONNECTION_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'socket hang up', 'EPIPE']);
