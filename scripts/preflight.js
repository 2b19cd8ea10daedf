#!/usr/bin/env node
// Usage: node scripts/preflight.js — run by npm start, npm run demo and npm test before anything is built.
// Plain CommonJS on purpose: it must work before `nest build`, so it cannot import src/config.
// The defaults below must stay equal to src/config/app-config.ts (DATABASE_URL, REDIS_URL).
// Exit 1 when Node.js is older than 20.19 or PostgreSQL does not answer; Redis down is only a warning (the APIs keep answering).
'use strict';
const fs = require('fs');
const net = require('net');
const tls = require('tls');
const path = require('path');
const { Client } = require('pg');
const { nodeLineNotice, testedReleases } = require('./node-line');

const DEFAULT_DATABASE_URL = 'postgres://postgres@localhost:5432/kyc';
const DEFAULT_REDIS_URL = 'redis://localhost:6379';
const TIMEOUT_MS = 3000;

function masked(raw) {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '****';
    return url.toString();
  } catch {
    return '(not a URL)';
  }
}

function isLocal(host) {
  return ['localhost', '127.0.0.1', '::1', '[::1]', ''].includes(host);
}

function commandExists(name) {
  return (process.env.PATH || '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, name)));
}

function installedPostgresVersion() {
  try {
    const versions = fs.readdirSync('/etc/postgresql').filter((v) => /^\d+(\.\d+)?$/.test(v));
    return versions.sort((a, b) => Number(a) - Number(b)).pop();
  } catch {
    return undefined;
  }
}

function postgresFixes(host) {
  const fixes = [];
  if (isLocal(host)) {
    const version = installedPostgresVersion();
    if (version && commandExists('pg_ctlcluster')) {
      fixes.push(`start the local server: pg_ctlcluster ${version} main start   (as root or the postgres user)`);
    } else {
      fixes.push(
        'install PostgreSQL: apt-get install -y postgresql   (Debian/Ubuntu; brew install postgresql on macOS)',
      );
    }
    fixes.push('or: npm run services   (starts the installed PostgreSQL and Redis that are not running)');
  }
  fixes.push(
    'or with Docker: docker compose -f docker-compose.dev.yml up -d postgres   (127.0.0.1:5432, user postgres)',
  );
  fixes.push('or point DATABASE_URL at a server that runs (postgres://user:password@host:5432/kyc)');
  return fixes;
}

function redisFixes(host, port) {
  const fixes = [];
  if (isLocal(host)) {
    if (commandExists('redis-server')) {
      fixes.push(`start the local server: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port ${port}`);
    } else {
      fixes.push('install Redis: apt-get install -y redis-server   (Debian/Ubuntu; brew install redis on macOS)');
    }
    fixes.push('or: npm run services   (starts the installed PostgreSQL and Redis that are not running)');
  }
  fixes.push('or with Docker: docker compose -f docker-compose.dev.yml up -d redis   (127.0.0.1:6379)');
  fixes.push('or point REDIS_URL (or REDIS_CLUSTER_NODES) at a server that runs');
  return fixes;
}

function report(stream, lines, fixes) {
  stream.write(lines.join('\n') + '\n' + fixes.map((fix) => `  - ${fix}`).join('\n') + '\n');
}

async function checkPostgres() {
  const raw = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  let url;
  try {
    url = new URL(raw);
  } catch {
    report(process.stderr, [`preflight: DATABASE_URL is not a URL: ${masked(raw)}`], []);
    return false;
  }
  // The server is what must answer: npm start creates the service's own database when it is missing.
  const client = new Client({ connectionString: raw, database: 'postgres', connectionTimeoutMillis: TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    return true;
  } catch (error) {
    const code = error && error.code;
    if (code === '3D000') return true;
    const where = `PostgreSQL at ${masked(raw)}`;
    if (code === '28P01' || code === '28000') {
      report(
        process.stderr,
        [`preflight: ${where} refused the credentials (${error.message}).`, 'To fix:'],
        [
          'fix the user or password in DATABASE_URL (postgres://user:password@host:port/kyc)',
          "or set the user's password: sudo -u postgres psql -c \"ALTER USER postgres PASSWORD '…'\"",
          'or allow the connection in pg_hba.conf (e.g. trust for 127.0.0.1/32 on a development machine) and reload',
        ],
      );
      return false;
    }
    const down = code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || /timeout/i.test(String(error.message));
    const what = down
      ? `does not answer (${code || 'timeout'}): it is not running or not listening there.`
      : `could not be reached: ${error.message}`;
    report(
      process.stderr,
      [`preflight: ${where} ${what}`, 'The service needs it to start. To fix:'],
      postgresFixes(url.hostname),
    );
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function command(args) {
  return `*${args.length}\r\n` + args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('');
}

/** The first reply line of the node, after AUTH when the URL carries a password. */
function redisReply(target) {
  return new Promise((resolve) => {
    const options = { host: target.host, port: target.port };
    const socket = target.tls ? tls.connect({ ...options, servername: target.host }) : net.connect(options);
    let buffer = '';
    let replies = 0;
    const expected = target.password ? 2 : 1;
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(TIMEOUT_MS, () => done({ error: 'timeout' }));
    socket.on('error', (error) => done({ error: error.code || error.message }));
    socket.on(target.tls ? 'secureConnect' : 'connect', () => {
      const auth = target.password
        ? command(target.username ? ['AUTH', target.username, target.password] : ['AUTH', target.password])
        : '';
      socket.write(auth + command(['PING']));
    });
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      const lines = buffer.split('\r\n').slice(0, -1);
      const failed = lines.find((line) => line.startsWith('-'));
      if (failed) return done({ reply: failed });
      replies = lines.length;
      if (replies >= expected) done({ reply: lines[lines.length - 1] });
    });
  });
}

function redisTargets() {
  const nodes = (process.env.REDIS_CLUSTER_NODES || '').trim();
  if (nodes) {
    return nodes.split(',').map((item) => {
      const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(item.trim()) || [];
      return { label: item.trim(), host: match[1] || item.trim(), port: Number(match[2]) || 6379, tls: false };
    });
  }
  const raw = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  const url = new URL(raw);
  return [
    {
      label: masked(raw),
      host: url.hostname.replace(/^\[|\]$/g, '') || 'localhost',
      port: Number(url.port) || 6379,
      tls: url.protocol === 'rediss:',
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    },
  ];
}

async function checkRedis() {
  let targets;
  try {
    targets = redisTargets();
  } catch {
    process.stderr.write('preflight: WARNING: REDIS_URL is not a URL; the service will say which variable is wrong.\n');
    return;
  }
  const results = await Promise.all(targets.map((target) => redisReply(target)));
  if (results.some((result) => result.reply && result.reply.startsWith('+'))) return;
  const protectedMode = results.find((result) => result.reply && /DENIED|protected mode/i.test(result.reply));
  const lines = [
    `preflight: WARNING: Redis at ${targets.map((t) => t.label).join(', ')} does not answer ` +
      `(${results.map((r) => (r.reply || r.error).slice(0, 120)).join('; ')}).`,
    'The service starts anyway and its APIs answer, but webhooks wait (queued in PostgreSQL) until Redis answers.',
  ];
  if (protectedMode) {
    lines.push(
      'Redis is in protected mode: it refuses connections from other addresses without a password. ' +
        'Bind it to the address you connect from, set a password (requirepass) and put it in REDIS_URL, ' +
        'or, on a trusted development machine only, redis-cli CONFIG SET protected-mode no.',
    );
  } else if (results.some((result) => result.reply && /NOAUTH|WRONGPASS|invalid password/i.test(result.reply))) {
    lines.push('Redis wants a password: put it in REDIS_URL (redis://:password@host:6379).');
  }
  lines.push('To fix:');
  report(process.stderr, lines, protectedMode ? [] : redisFixes(targets[0].host, targets[0].port));
}

/** One line when this Node.js is too old (false: stop), end of life or not a tested line (a warning). */
function checkNode() {
  const notice = nodeLineNotice(process.versions.node, new Date().toISOString().slice(0, 10), testedReleases());
  if (notice) process.stderr.write(`${notice.line}\n`);
  return !notice || notice.level !== 'error';
}

async function main() {
  if (!checkNode()) process.exit(1);
  const postgresOk = await checkPostgres();
  await checkRedis();
  process.exit(postgresOk ? 0 : 1);
}

main().catch((error) => {
  process.stderr.write(`preflight: ${error && error.message ? error.message : error}\n`);
  process.exit(1);
});
