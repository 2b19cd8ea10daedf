import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './test-app';

const FIXTURE = join(__dirname, '..', 'fixtures', 'oidc-issuer.mjs');
const CLIENT_SECRET = 'oidc-test-client-secret';
/** The fixture's authorization-code client, for the dashboard's login (OIDC_CLIENT_ID, OIDC_CLIENT_SECRET). */
export const DASHBOARD_CLIENT = { id: 'dashboard', secret: 'oidc-dashboard-client-secret' };

/** A real OpenID provider (test/fixtures/oidc-issuer.mjs) on 127.0.0.1, in a process of its own. */
export interface TestIssuer {
  url: string;
  /** A JWT access token from the client-credentials grant of `client` (`viewer-bot`, `admin-bot`...). */
  token(client: string, resource?: string): Promise<string>;
  /** Any claims, signed with the provider's current key. */
  sign(claims: Record<string, unknown>): Promise<string>;
  /** New keys (their kid first in the JWKS); tokens are signed with them from now on. */
  rotate(): Promise<void>;
  /** Registers the dashboard client's redirect URI (`<PUBLIC_BASE_URL>/admin/auth/callback`). */
  registerDashboard(redirectUri: string): Promise<void>;
  stop(): Promise<void>;
}

async function post(url: string, init: RequestInit): Promise<Record<string, string>> {
  const res = await fetch(url, { method: 'POST', ...init });
  const body = (await res.json()) as Record<string, string>;
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export async function startIssuer(audience: string): Promise<TestIssuer> {
  const port = await freePort();
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, ISSUER_PORT: String(port), ISSUER_AUDIENCE: audience },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`issuer did not start:\n${output}`)), 20_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('ready\n')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`issuer exited with ${code}:\n${output}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    token: async (client, resource = audience) => {
      const body = await post(`${url}/token`, {
        headers: { authorization: `Basic ${Buffer.from(`${client}:${CLIENT_SECRET}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'admin', resource }),
      });
      return body.access_token;
    },
    sign: async (claims) => (await post(`${url}/test/sign`, { body: JSON.stringify({ claims }) })).token,
    rotate: async () => {
      await post(`${url}/test/rotate`, {});
    },
    registerDashboard: async (redirectUri) => {
      await post(`${url}/test/dashboard`, { body: JSON.stringify({ redirect_uri: redirectUri }) });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
