import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';

const DEMO_JS = join(__dirname, '..', 'dist', 'demo', 'main.js');

/** The demo's database: the configured one's name + `_demo` (here the run's test database). */
function demoDatabaseUrl(): URL {
  const url = new URL(process.env.DATABASE_URL as string);
  url.pathname = `${url.pathname}_demo`;
  return url;
}

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO_JS], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

describe('npm run demo', () => {
  afterAll(async () => {
    const url = demoDatabaseUrl();
    const name = url.pathname.slice(1);
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  });

  it('boots the service, drives two verifications, verifies every webhook, shows list and log, and exits 0', async () => {
    // Twice: each run resets its database and queue prefix, so the second sees only its own data.
    for (let run = 0; run < 2; run++) {
      const result = await runDemo();
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(result.ms).toBeLessThan(30_000);
      const out = result.stdout;
      expect(out).toContain(`database ${demoDatabaseUrl().pathname.slice(1)}`);
      expect(out).toMatch(/POST \/api\/v1\/admin\/accounts → account [0-9a-f-]{36} "Demo Bank"/);
      expect(out.match(/signature verified ✓/g)).toHaveLength(4);
      for (const change of ['pending → processing v2', 'processing → approved v3', 'processing → rejected v3']) {
        expect(out).toContain(change);
      }
      expect(out).toContain('{ object: "list", has_more: false, next_cursor: null, data: 2 verifications }');
      expect(out).toMatch(/user-ada\s+approved\s+v3/);
      expect(out).toMatch(/user-bob\s+rejected\s+v3\s+document_expired, face_mismatch/);
      const log = out.slice(out.indexOf('GET /api/v1/public/kyc/webhook-events'));
      expect(log.match(/delivered attempts 1\s+last HTTP 204/g)).toHaveLength(4);
      expect(out).toContain('Done: 4 webhooks received, 4 signatures verified, 0 rejected.');
      // The secret is shown only shortened.
      expect(out).not.toMatch(/whsec_[A-Za-z0-9+/]{43}=/);
    }
  });
});
