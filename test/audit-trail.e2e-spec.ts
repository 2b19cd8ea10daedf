import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unchecked } from './helpers/checked-http';
import { createAccount, createVerification, transition } from './helpers/factories';
import { AuditEntry, auditActions, expectedHash, parseNdjson } from './helpers/audit';
import { expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

const ADMIN_EVENTS = '/api/v1/admin/audit-events';
const VERIFY_AUDIT = join(__dirname, '..', 'examples', 'verify-audit', 'verify-audit.mjs');
const PUBLIC_EVENTS = '/api/v1/public/kyc/audit-events';
const ENTRY_KEYS = [
  'account_id',
  'action',
  'actor',
  'at',
  'changes',
  'hash',
  'id',
  'object',
  'outcome',
  'previous_hash',
  'request_id',
  'sequence',
  'source_ip',
  'target',
];

async function breakGlassUses(t: TestApp): Promise<number> {
  const res = await t.http.get('/metrics');
  const line = /^kyc_break_glass_uses_total (\d+)/m.exec(res.text);
  return line ? Number(line[1]) : NaN;
}

describe('audit trail', () => {
  let t: TestApp;
  const admin = (): string => `Bearer ${t.adminToken}`;

  beforeAll(async () => {
    t = await startApp({ APP_ROLE: 'api' });
  });

  afterAll(async () => {
    await t.close();
  });

  /** A change's answer, read the moment it arrives: its one entry is in the chain, nothing left staged. */
  async function answeredChained(what: string, request: PromiseLike<{ headers: Record<string, string> }>) {
    const res = await request;
    const { rows } = await t.db.query<{ chained: number; staged: number }>(
      `SELECT (SELECT count(*)::int FROM audit_events WHERE request_id = $1) AS chained,
              (SELECT count(*)::int FROM audit_pending WHERE request_id = $1) AS staged`,
      [res.headers['x-request-id']],
    );
    expect({ what, ...rows[0] }).toEqual({ what, chained: 1, staged: 0 });
  }

  async function adminList(query: Record<string, string>): Promise<{ data: AuditEntry[]; next_cursor: string | null }> {
    const res = await t.http.get(ADMIN_EVENTS).query(query).set('authorization', admin());
    expect(res.status).toBe(200);
    return res.body as { data: AuditEntry[]; next_cursor: string | null };
  }

  it('records every admin change in its transaction, with field names only, as break-glass', async () => {
    const before = await breakGlassUses(t);
    const account = await createAccount(t, { name: 'Secret Name Ltd', webhook_url: 'http://127.0.0.1:9/hook' });
    await answeredChained(
      'account update',
      t.http
        .patch(`/api/v1/admin/accounts/${account.id}`)
        .set('authorization', admin())
        .send({ name: 'Other Name' })
        .expect(200),
    );
    await answeredChained(
      'secret rotation',
      t.http
        .post(`/api/v1/admin/accounts/${account.id}/secret/rotate`)
        .set('authorization', admin())
        .send({ grace_period_seconds: 0 })
        .expect(200),
    );
    await t.http.get(`/api/v1/admin/accounts/${account.id}`).set('authorization', admin()).expect(200);
    // A refused change (400) writes nothing.
    const bad = await t.http
      .patch(`/api/v1/admin/accounts/${account.id}`)
      .set('authorization', admin())
      .send({ webhook_url: 'ftp://x' });
    expectError(bad, 400, 'validation_failed');

    expect(await auditActions(t.db, account.id)).toEqual([
      'account.created',
      'account.updated',
      'account.secret_rotated',
    ]);
    const { data } = await adminList({ account_id: account.id });
    expect(data.map((e) => e.action)).toEqual(['account.secret_rotated', 'account.updated', 'account.created']);
    const [rotated, updated, created] = data;
    expect(Object.keys(created).sort()).toEqual(ENTRY_KEYS);
    expect(created).toMatchObject({
      object: 'audit_event',
      actor: { type: 'break_glass', id: null, name: null, via: 'admin_token' },
      outcome: 'success',
      target: { type: 'account', id: account.id },
      changes: ['name', 'webhook_url', 'webhook_secret'],
      source_ip: '127.0.0.1',
    });
    expect(updated.changes).toEqual(['name']);
    expect(rotated.changes).toEqual(['webhook_secret']);
    const text = JSON.stringify(data);
    for (const value of ['Secret Name', 'Other Name', '127.0.0.1:9', account.secret]) expect(text).not.toContain(value);
    // Every ADMIN_TOKEN request counts, reads included; a read is recorded as admin.read.
    expect(await breakGlassUses(t)).toBeGreaterThanOrEqual(before + 6);
    const reads = await adminList({ action: 'admin.read', actor_type: 'break_glass', limit: '5' });
    expect(reads.data.length).toBeGreaterThan(0);
  });

  it('records the public API changes, and the client sees its own account only, without chain or address', async () => {
    const account = await createAccount(t);
    const other = await createAccount(t);
    const client = `Bearer ${account.secret}`;
    const v = await createVerification(t, account.id, { external_user_id: 'person-audited' });
    await transition(t, v.id, { status: 'processing' });
    await answeredChained(
      'endpoint update',
      t.http.patch('/api/v1/public/kyc/webhook-endpoint').set('authorization', client).send({}).expect(200),
    );
    await answeredChained(
      'redaction',
      t.http.post(`/api/v1/public/kyc/verifications/${v.id}/redact`).set('authorization', client).expect(200),
    );
    // Redacting again changes nothing: no second entry.
    await t.http.post(`/api/v1/public/kyc/verifications/${v.id}/redact`).set('authorization', client).expect(200);
    await answeredChained(
      'test event',
      t.http
        .post('/api/v1/public/kyc/webhook-events/test')
        .set('authorization', client)
        .send({ status: 'approved' })
        .expect(202),
    );
    const { rows } = await t.db.query<{ id: string }>('SELECT id FROM webhook_events WHERE verification_id = $1', [
      v.id,
    ]);
    await answeredChained(
      'redelivery',
      t.http.post(`/api/v1/public/kyc/webhook-events/${rows[0].id}/redeliver`).set('authorization', client).expect(202),
    );
    await t.http
      .patch('/api/v1/public/kyc/webhook-endpoint')
      .set('authorization', client)
      .send({ status: 'disabled' })
      .expect(200);

    expect(await auditActions(t.db, account.id)).toEqual([
      'account.created',
      'webhook_endpoint.updated',
      'verification.redacted',
      'webhook_event.test_sent',
      'webhook_event.redelivered',
      'webhook_endpoint.updated',
    ]);
    const res = await t.http.get(PUBLIC_EVENTS).set('authorization', client).query({ limit: '100' });
    expect(res.status).toBe(200);
    const entries = res.body.data as AuditEntry[];
    expect(entries.every((e) => e.account_id === account.id)).toBe(true);
    for (const entry of entries) {
      expect(entry).not.toHaveProperty('hash');
      expect(entry).not.toHaveProperty('previous_hash');
      expect(entry).not.toHaveProperty('source_ip');
    }
    const redacted = entries.find((e) => e.action === 'verification.redacted');
    expect(redacted).toMatchObject({
      actor: { type: 'client', id: account.id, name: null, via: 'webhook_secret' },
      target: { type: 'verification', id: v.id },
    });
    expect(redacted?.changes.sort()).toEqual(['applicant', 'document', 'external_user_id', 'metadata']);
    expect(entries.find((e) => e.action === 'webhook_endpoint.updated')?.changes).toEqual(['status']);
    expect(JSON.stringify(entries)).not.toContain('person-audited');
    // The read itself is recorded.
    expect(await auditActions(t.db, account.id)).toContain('audit.read');
    const theirs = await t.http.get(PUBLIC_EVENTS).set('authorization', `Bearer ${other.secret}`);
    expect((theirs.body.data as AuditEntry[]).some((e) => e.account_id === account.id)).toBe(false);
  });

  it('answers operator keys, legal holds and bulk redeliveries once their entries are in the chain', async () => {
    const account = await createAccount(t);
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    await answeredChained(
      'operator key',
      t.http
        .post('/api/v1/admin/operator-keys')
        .set('authorization', admin())
        .send({ name: 'chained', role: 'viewer' })
        .expect(201),
    );
    await answeredChained(
      'legal hold',
      t.http
        .put(`/api/v1/admin/verifications/${v.id}/legal-hold`)
        .set('authorization', admin())
        .send({ reason: 'AML record keeping' })
        .expect(200),
    );
    await t.db.query(
      `UPDATE webhook_events SET delivery_status = 'failed', next_attempt_at = NULL WHERE verification_id = $1`,
      [v.id],
    );
    await answeredChained(
      'bulk redelivery',
      t.http
        .post('/api/v1/public/kyc/webhook-events/redeliver')
        .set('authorization', `Bearer ${account.secret}`)
        .send({ delivery_status: 'failed' })
        .expect(202),
    );
  });

  it('concurrent audited writes: each is answered after its entry is in the chain, and the chain stays gapless', async () => {
    const accounts = await Promise.all(Array.from({ length: 24 }, () => createAccount(t)));
    const answered = await Promise.all(
      accounts.map(async (account) => {
        const res = await t.http
          .patch('/api/v1/public/kyc/webhook-endpoint')
          .set('authorization', `Bearer ${account.secret}`)
          .send({ status: 'disabled' });
        // Read the moment the answer arrives: the entry is already chained, nothing is left staged for it.
        const { rows } = await t.db.query(
          `SELECT (SELECT count(*)::int FROM audit_events WHERE request_id = $1) AS chained,
                  (SELECT count(*)::int FROM audit_pending WHERE request_id = $1) AS staged`,
          [res.headers['x-request-id']],
        );
        return { status: res.status, ...rows[0] };
      }),
    );
    expect(answered).toEqual(accounts.map(() => ({ status: 200, chained: 1, staged: 0 })));
    const exported = parseNdjson(
      (await unchecked(t.http.get(`${ADMIN_EVENTS}/export`).set('authorization', admin()))).text,
    );
    exported.forEach((entry, i) => {
      expect(entry.sequence).toBe(i + 1);
      if (i > 0) expect(entry.previous_hash).toBe(exported[i - 1].hash);
      expect(expectedHash(entry)).toBe(entry.hash);
    });
    const disabled = exported.filter(
      (e) => e.action === 'webhook_endpoint.updated' && accounts.some((a) => a.id === e.account_id),
    );
    expect(disabled).toHaveLength(accounts.length);
  });

  it('filters and pages newest first; bad filters are 400', async () => {
    const account = await createAccount(t);
    for (const name of ['a', 'b', 'c']) {
      await t.http
        .patch(`/api/v1/admin/accounts/${account.id}`)
        .set('authorization', admin())
        .send({ name })
        .expect(200);
    }
    const seen: AuditEntry[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: AuditEntry[]; next_cursor: string | null } = await adminList({
        account_id: account.id,
        action: 'account.updated,account.created',
        limit: '2',
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.map((e) => e.action)).toEqual([
      'account.updated',
      'account.updated',
      'account.updated',
      'account.created',
    ]);
    const sequences = seen.map((e) => e.sequence);
    expect([...sequences].sort((a, b) => b - a)).toEqual(sequences);
    const first = seen[seen.length - 1];
    const window = await adminList({ account_id: account.id, from: first.at, to: seen[0].at, outcome: 'success' });
    expect(window.data.every((e) => e.at >= first.at && e.at < seen[0].at)).toBe(true);
    expect((await adminList({ target_id: account.id, actor_id: 'nobody' })).data).toEqual([]);

    for (const query of [{ outcome: 'maybe' }, { from: 'yesterday' }, { actor_type: 'robot' }, { limit: '0' }]) {
      expectError(await t.http.get(ADMIN_EVENTS).query(query).set('authorization', admin()), 400, 'validation_failed');
    }
    expectError(
      await t.http.get(ADMIN_EVENTS).query({ cursor: 'garbage' }).set('authorization', admin()),
      400,
      'invalid_cursor',
    );
    expectError(await t.http.get(ADMIN_EVENTS), 401, 'unauthorized');
  });

  it('exports NDJSON oldest first, whose chain an independent implementation recomputes', async () => {
    const account = await createAccount(t);
    const res = await unchecked(
      t.http
        .get(`${ADMIN_EVENTS}/export`)
        .set('authorization', admin())
        .buffer(true)
        .parse((response, done) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => done(null, text));
        }),
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const entries = parseNdjson(res.body as string);
    expect(entries.length).toBeGreaterThan(3);
    expect(entries[0].sequence).toBe(1);
    expect(entries[0].previous_hash).toBe('0'.repeat(64));
    entries.forEach((entry, i) => {
      expect(Object.keys(entry).sort()).toEqual(ENTRY_KEYS);
      expect(entry.sequence).toBe(i + 1);
      if (i > 0) expect(entry.previous_hash).toBe(entries[i - 1].hash);
      expect(expectedHash(entry)).toBe(entry.hash);
    });
    expect(entries.some((e) => e.account_id === account.id && e.action === 'account.created')).toBe(true);
    expect(await auditActions(t.db, account.id)).toEqual(['account.created']);
    const { rows } = await t.db.query(`SELECT 1 FROM audit_events WHERE action = 'audit.exported'`);
    expect(rows.length).toBeGreaterThan(0);

    const windowed = await unchecked(
      t.http
        .get(`${ADMIN_EVENTS}/export`)
        .query({ from: entries[1].at, to: entries[entries.length - 1].at })
        .set('authorization', admin()),
    );
    const inWindow = parseNdjson(windowed.text);
    expect(inWindow.every((e) => e.at >= entries[1].at && e.at < entries[entries.length - 1].at)).toBe(true);
    expectError(
      await t.http
        .get(`${ADMIN_EVENTS}/export`)
        .query({ from: '2026-01-02', to: '2026-01-01' })
        .set('authorization', admin()),
      400,
      'validation_failed',
    );
  });

  it('the offline verifier in examples/ passes a real export and names the first altered or missing entry', async () => {
    await createAccount(t);
    const exported = await unchecked(t.http.get(`${ADMIN_EVENTS}/export`).set('authorization', admin()));
    expect(exported.status).toBe(200);
    const lines = exported.text.trim().split('\n');
    const dir = mkdtempSync(join(tmpdir(), 'kyc-trail-'));
    const verify = (name: string, content: string[]) => {
      writeFileSync(join(dir, name), `${content.join('\n')}\n`);
      return spawnSync(process.execPath, [VERIFY_AUDIT, join(dir, name)], { encoding: 'utf8' });
    };
    const intact = verify('intact.ndjson', lines);
    expect({ code: intact.status, out: intact.stdout.trim() }).toEqual({
      code: 0,
      out: `audit: ${lines.length} entries, sequences 1–${lines.length}, chain intact, anchor ${'0'.repeat(64)}`,
    });
    // The third entry's outcome flipped, whatever earlier spec files on this database wrote there.
    const altered = lines.map((line, i) =>
      i === 2
        ? line.replace(
            /"outcome":"(\w+)"/,
            (_, outcome: string) => `"outcome":"${outcome === 'success' ? 'denied' : 'success'}"`,
          )
        : line,
    );
    expect(altered[2]).not.toBe(lines[2]);
    const tampered = verify('altered.ndjson', altered);
    expect({ code: tampered.status, err: tampered.stderr.trim() }).toEqual({
      code: 1,
      err: 'audit: sequence 3: hash does not match the entry (it was altered)',
    });
    const gap = verify('gap.ndjson', [...lines.slice(0, 1), ...lines.slice(2)]);
    expect({ code: gap.status, err: gap.stderr.trim() }).toEqual({
      code: 1,
      err: 'audit: sequence 3: follows sequence 1 (an entry is missing)',
    });
  });

  it('refuses UPDATE, DELETE and TRUNCATE on audit_events, for the owner too', async () => {
    const { rows } = await t.db.query<{ owner: string; me: string }>(
      `SELECT tableowner AS owner, current_user AS me FROM pg_tables WHERE tablename = 'audit_events'`,
    );
    expect(rows[0].owner).toBe(rows[0].me);
    await expect(t.db.query(`UPDATE audit_events SET action = 'x' WHERE sequence = 1`)).rejects.toThrow(/append-only/);
    await expect(t.db.query(`DELETE FROM audit_events WHERE sequence = 1`)).rejects.toThrow(/append-only/);
    await expect(t.db.query(`TRUNCATE audit_events`)).rejects.toThrow(/append-only/);
    const count = await t.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE sequence = 1`);
    expect(count.rows[0].n).toBe(1);
  });
});
