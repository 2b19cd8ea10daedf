import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { cliWith } from './helpers/cli';
import { AuditEntry, expectedHash } from './helpers/audit';
import { ownDatabase } from './helpers/own-database';

const GENESIS = '0'.repeat(64);
const YEAR_MS = 365 * 24 * 3600 * 1000;

/** Appends correctly chained entries straight into the table (INSERT is allowed), as the service would. */
async function append(db: Pool, ats: Date[]): Promise<AuditEntry[]> {
  const { rows } = await db.query<{ last_sequence: string; last_hash: string }>(
    'SELECT last_sequence, last_hash FROM audit_chain WHERE id = 1',
  );
  let sequence = Number(rows[0].last_sequence);
  let previous = rows[0].last_hash;
  const entries: AuditEntry[] = [];
  for (const at of ats) {
    sequence += 1;
    const entry: AuditEntry = {
      id: randomUUID(),
      object: 'audit_event',
      sequence,
      at: at.toISOString(),
      actor: { type: 'system', id: null, name: null, via: 'service' },
      action: 'verification.redacted',
      outcome: 'success',
      target: { type: 'verification', id: randomUUID() },
      account_id: null,
      changes: ['applicant'],
      request_id: null,
      source_ip: null,
      previous_hash: previous,
    };
    entry.hash = expectedHash(entry);
    previous = entry.hash;
    await db.query(
      `INSERT INTO audit_events (sequence, id, at, actor_type, actor_id, actor_name, actor_via, action, outcome,
         target_type, target_id, account_id, changes, request_id, source_ip, previous_hash, hash)
       VALUES ($1, $2, $3, 'system', NULL, NULL, 'service', $4, 'success', 'verification', $5, NULL, $6, NULL, NULL, $7, $8)`,
      [sequence, entry.id, at, entry.action, entry.target?.id, entry.changes, entry.previous_hash, entry.hash],
    );
    entries.push(entry);
  }
  await db.query('UPDATE audit_chain SET last_sequence = $1, last_hash = $2 WHERE id = 1', [sequence, previous]);
  return entries;
}

describe('audit verify and the trail retention (a database of its own)', () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Pool;
  const run = (env: Record<string, string>, ...args: string[]) =>
    cliWith({ DATABASE_URL: database.url, ...env }, ...args);

  beforeAll(async () => {
    database = await ownDatabase('audit_chain');
    db = new Pool({ connectionString: database.url, max: 2 });
  });

  afterAll(async () => {
    await db.end();
    await database.drop();
  });

  it('an empty trail is intact', async () => {
    expect(await run({}, 'audit', 'verify')).toMatchObject({ code: 0, stdout: 'audit: 0 entries, chain intact\n' });
  });

  it('AUDIT_RETENTION_DAYS removes the oldest entries only, and the chain stays verifiable from its anchor', async () => {
    const old = new Date(Date.now() - 3 * YEAR_MS);
    const [first] = await append(db, [old, new Date(old.getTime() + 1), new Date(old.getTime() + 2)]);
    expect(first.previous_hash).toBe(GENESIS);
    // The service appends behind them, with no gap (actor system: the CLI is no request).
    expect((await run({}, 'accounts:create', '--name', 'Chained')).code).toBe(0);
    // An entry whose clock stepped back: older than the cut-off, but after a kept one.
    await append(db, [old]);
    const all = await db.query('SELECT sequence::int, action, actor_type FROM audit_events ORDER BY sequence');
    expect(all.rows.map((row) => row.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(all.rows[3]).toEqual({ sequence: 4, action: 'account.created', actor_type: 'system' });
    expect(await run({}, 'audit', 'verify')).toMatchObject({
      code: 0,
      stdout: 'audit: 5 entries, sequences 1–5, chain intact\n',
    });
    // 0 keeps the trail forever.
    expect(await run({ AUDIT_RETENTION_DAYS: '0' }, 'retention')).toMatchObject({ code: 0, stderr: '' });
    expect((await db.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n).toBe(5);

    expect(await run({ AUDIT_RETENTION_DAYS: '365' }, 'retention')).toMatchObject({ code: 0, stderr: '' });
    const kept = await db.query<{ sequence: number }>('SELECT sequence::int FROM audit_events ORDER BY sequence');
    expect(kept.rows.map((row) => row.sequence)).toEqual([4, 5]);
    expect(await run({}, 'audit', 'verify')).toMatchObject({
      code: 0,
      stdout: 'audit: 2 entries, sequences 4–5, chain intact\n',
    });
    // The trigger still refuses every other delete afterwards.
    await expect(db.query('DELETE FROM audit_events WHERE sequence = 5')).rejects.toThrow(/append-only/);
  });

  it('audit verify exits 1 naming the first altered or missing sequence (tampered with the trigger dropped)', async () => {
    await db.query('DROP TRIGGER audit_events_append_only ON audit_events');
    await db.query(`UPDATE audit_events SET changes = '{status}' WHERE sequence = 5`);
    const altered = await run({}, 'audit', 'verify');
    expect(altered.code).toBe(1);
    expect(altered.stderr).toMatch(/sequence 5 has a hash that does not match/);
    await db.query('DELETE FROM audit_events WHERE sequence = 4');
    const missing = await run({}, 'audit', 'verify');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/sequence 4 is missing/);
  });
});
