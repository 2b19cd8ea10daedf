/**
 * A probe, not a bench (no floor, no interleaving): another client's list p99 for 30 s before a PII
 * pass and during its first `seconds` (the first 8 s after its start left out), on the database that
 * `npm run bench:year -- --verifications 500000 --keep-database` left. By default an api, a worker and
 * a retention worker (APP_ROLE=worker); with ALLINONE=1 one APP_ROLE=all process, restarted with
 * retention on, serves the list, delivers and runs the pass, as a default deployment does. The hooked
 * accounts' endpoints are pointed at this script's receiver (127.0.0.1:39027); every second it prints
 * the slowest list answer and the webhooks received, and statements over 50 ms.
 *
 *   npx nest build && npx tsc -p bench/tsconfig.json
 *   [ALLINONE=1] [PROBE_MAIN=<another build>/dist/src/main.js] node bench/year/probe-pass.js <RETENTION_BUDGET_PERCENT> <seconds>
 */
const { spawn } = require('child_process');
const { join } = require('path');
const http = require('http');
const { Client } = require('pg');
const env = require('../../dist-bench/bench/harness/service-env.js');
const DB = 'postgres://postgres@127.0.0.1:5432/kyc_year_big_bench';
const budget = process.argv[2] || '10';
const seconds = Number(process.argv[3] || 90);
const t0 = Date.now(); const ts = () => ((Date.now() - t0) / 1000).toFixed(2);
const procs = [];
function start(name, port, extra) {
  const e = { ...process.env, ...env.serviceEnv(DB, 'kyc_diag', { WEBHOOK_EVENT_RETENTION_DAYS: '0' }), PORT: String(port), ...extra };
  const p = spawn(process.execPath, [process.env.PROBE_MAIN || join(__dirname, '..', '..', 'dist', 'src', 'main.js')], { env: e });
  p.stdout.on('data', (d) => process.stdout.write(`[${ts()} ${name}] ${d}`));
  p.stderr.on('data', (d) => process.stdout.write(`[${ts()} ${name} ERR] ${d}`));
  procs.push(p); return p;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function ready(port) { for (;;) { try { const ok = await new Promise((res) => http.get(`http://127.0.0.1:${port}/health/ready`, (r) => { r.resume(); res(r.statusCode === 200); }).on('error', () => res(false))); if (ok) return; } catch {} await sleep(200); } }
(async () => {
  let received = 0;
  const recv = http.createServer((req, res) => { req.resume(); req.on('end', () => { received++; res.end('ok'); }); }).listen(39027);
  const db = new Client({ connectionString: DB }); await db.connect();
  // The kept database's endpoints are put back as they were at the end (bench:year --reuse delivers to them).
  const { rows: urls } = await db.query('SELECT id, webhook_url FROM accounts WHERE webhook_url IS NOT NULL OR id IN (SELECT account_id FROM webhook_endpoints)');
  await db.query(process.env.NOHOOK ? "UPDATE accounts SET webhook_url = NULL" : "UPDATE accounts SET webhook_url = 'http://127.0.0.1:39027/hook/' || id WHERE id IN (SELECT account_id FROM webhook_endpoints) OR webhook_url IS NOT NULL");
  const ALL = !!process.env.ALLINONE;
  let apiProc = start('api', 4101, { APP_ROLE: ALL ? 'all' : 'api' }); if (!ALL) start('worker', 4102, { APP_ROLE: 'worker' });
  await ready(4101); if (!ALL) await ready(4102);
  const secret = env.benchSecret(1);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const lat = []; let slow = []; let secMax = 0; let lastRecv = 0;
  setInterval(() => { console.log(`[${ts()}] SEC listmax ${secMax.toFixed(0)} recv ${received - lastRecv}`); secMax = 0; lastRecv = received; }, 1000);
  const probe = () => { const s = performance.now(); http.get({ host: '127.0.0.1', port: 4101, path: '/api/v1/public/kyc/verifications?limit=20', agent, headers: { authorization: `Bearer ${secret}` } }, (r) => { r.resume(); r.on('end', () => { const ms = performance.now() - s; if (r.statusCode !== 200) return; lat.push([Date.now(), ms]); secMax = Math.max(secMax, ms); }); }).on('error', () => undefined); };
  const timer = setInterval(probe, 10);
  const sample = setInterval(async () => { try { const { rows } = await db.query(`select pid, backend_type, wait_event_type||':'||coalesce(wait_event,'') w, state, (extract(epoch from now()-query_start)*1000)::int ms, left(regexp_replace(query,'\\s+',' ','g'),110) q from pg_stat_activity where datname='kyc_year_big_bench' and state not in ('idle') and pid<>pg_backend_pid() and (now()-query_start) > interval '50 ms' and wait_event is distinct from 'advisory'`); for (const r of rows) console.log(`[${ts()}] PG ${r.pid} ${r.w} ${r.state} ${r.ms}ms ${r.q}`); } catch (e) { console.log('sample', e.message); } }, 100);
  await sleep(40000);
  console.log(`[${ts()}] ===== starting retention worker, budget ${budget}`);
  if (ALL) { apiProc.kill('SIGTERM'); await new Promise((r) => apiProc.on('exit', r)); apiProc = start('api', 4101, { APP_ROLE: 'all', PII_RETENTION_DAYS: '180', RETENTION_INTERVAL_MS: '100', RETENTION_BUDGET_PERCENT: budget, LOG_LEVEL: 'info' }); await ready(4101); } else start('pass', 4103, { APP_ROLE: 'worker', PII_RETENTION_DAYS: '180', RETENTION_INTERVAL_MS: '100', RETENTION_BUDGET_PERCENT: budget, LOG_LEVEL: 'info' });
  await sleep(seconds * 1000);
  clearInterval(timer); clearInterval(sample);
  const split = t0 + 40000; const warm = t0 + 10000; const pct = (a) => { a.sort((x, y) => x - y); return a[Math.floor(a.length * 0.99)]; };
  console.log(`before p99 ${pct(lat.filter(([t]) => t < split && t > warm).map(([, m]) => m)).toFixed(1)} during p99 ${pct(lat.filter(([t]) => t >= split + 8000).map(([, m]) => m)).toFixed(1)} received ${received}`);
  for (const p of procs) p.kill('SIGTERM'); await sleep(3000); for (const { id, webhook_url } of urls) await db.query('UPDATE accounts SET webhook_url = $2 WHERE id = $1', [id, webhook_url]);
  await db.end(); recv.close(); process.exit(0);
})();
