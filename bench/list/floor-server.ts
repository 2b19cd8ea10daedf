/**
 * The floor for the list benchmark: floor-core.ts's work on a bare node:http server, no framework.
 * Started by main.ts as its own process: FLOOR_PORT, DATABASE_URL, SECRET_ENCRYPTION_KEY.
 */
import { createServer } from 'node:http';
import { sendJson as send } from '../common/floor-json';
import { LIST_PATH, closeFloorPool, listPage } from './floor-core';

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://floor');
  if (req.method !== 'GET' || url.pathname !== LIST_PATH) return send(res, 404, { error: { code: 'not_found' } });
  listPage(req.headers.authorization, url.searchParams).then(
    (reply) => send(res, reply.status, reply.body),
    (error: unknown) => {
      process.stderr.write(`floor: ${(error as Error).message}\n`);
      send(res, 500, { error: { code: 'internal_error' } });
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.FLOOR_PORT ?? 3999), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void closeFloorPool();
});
