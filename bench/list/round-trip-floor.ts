/**
 * The list benchmark's round-trip floor: bare node:http answering every request, whatever its path
 * or credential, with one trivial query (SELECT 1) on a pg pool and a fixed small JSON body. No
 * authentication, no list SQL, no row mapping: the ceiling of one database round trip per request
 * on this machine, which no implementation of the list route (at least one query) can pass.
 * Started by main.ts as its own process: FLOOR_PORT, DATABASE_URL.
 */
import { createServer, ServerResponse } from 'node:http';
import { Pool } from 'pg';

// Same pool size as src/database/data-source-options.ts (extra.max) and the other floors.
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const BODY = JSON.stringify({ object: 'list', data: [], has_more: false, next_cursor: null });

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const server = createServer((_req, res) => {
  pool.query('SELECT 1').then(
    () => send(res, 200, BODY),
    (error: unknown) => {
      process.stderr.write(`round-trip floor: ${(error as Error).message}\n`);
      send(res, 500, JSON.stringify({ error: { code: 'internal_error' } }));
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.FLOOR_PORT ?? 3999), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
});
