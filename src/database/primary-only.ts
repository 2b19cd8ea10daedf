import { Client, type ClientBase } from 'pg';

/** Thrown when a connection meant for the primary reached a standby or a read-only server. */
export class NotPrimaryError extends Error {
  readonly code = 'KYC_NOT_PRIMARY';
  constructor(why: string) {
    super(`PostgreSQL connection refused: the server is ${why}, not the primary`);
  }
}

/** Which server process a connection talks to: the backend's PID, and its postmaster's start time. */
export interface Backend {
  readonly pid: number;
  readonly backendStart: string;
  readonly postmasterStart: string;
}

const backends = new WeakMap<ClientBase, Backend>();

/** The backend a primary-pool connection was checked against on connect (undefined for other pools). */
export function backendOf(client: ClientBase): Backend | undefined {
  return backends.get(client);
}

type Endpoint = Pick<Client, 'host' | 'port' | 'database'>;
const endpointOf = (c: Endpoint): string => `${c.host}:${c.port}/${c.database ?? ''}`;

/** One row telling whether a server is the primary, and which postmaster it is. */
export const PRIMARY_CHECK_SQL = `SELECT pg_is_in_recovery() AS recovery,
  current_setting('transaction_read_only') AS read_only,
  pg_backend_pid() AS pid, pg_postmaster_start_time()::text AS postmaster_start,
  (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS backend_start`;

export interface PrimaryCheck {
  recovery: boolean;
  read_only: string;
  pid: number;
  postmaster_start: string;
  backend_start: string;
}

/** Throws NotPrimaryError unless the checked server takes writes. */
export function assertPrimary(row: PrimaryCheck): void {
  if (row.recovery) throw new NotPrimaryError('in recovery (a standby)');
  if (row.read_only === 'on') throw new NotPrimaryError('read-only');
}

/**
 * The pg pool hook (`onConnect`) that checks every new connection to DATABASE_URL before its first
 * use: one that lands on a server in recovery (a standby a proxy still routes to during a failover)
 * or a read-only one is closed and refused, so writes and primary reads never go there; the request
 * answers 503 and the next connection is tried afresh. It also notes the backend, so that a commit
 * whose answer was lost can be settled (in-doubt.ts). Connections of the replicas' pools (the same
 * hook, as TypeORM gives every pool one `extra`) pass unchecked: a standby is what they are for.
 */
export function refuseStandby(primaryUrl: string): (client: ClientBase) => Promise<void> {
  // pg's own parser, so both sides of the comparison are read alike.
  const primary = endpointOf(new Client({ connectionString: primaryUrl }));
  return async (client) => {
    if (endpointOf(client as Client) !== primary) return;
    const { rows } = await client.query<PrimaryCheck>(PRIMARY_CHECK_SQL);
    assertPrimary(rows[0]);
    const [{ pid, backend_start, postmaster_start }] = rows;
    backends.set(client, { pid, backendStart: backend_start, postmasterStart: postmaster_start });
  };
}
