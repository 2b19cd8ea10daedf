import { Agent } from 'node:http';
import { connect } from 'node:net';
import type { Pool } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import { ApiClient, CountingReceiver, FAST_DELIVERY, report, runDb, sleep, tokens, waitUntil } from './harness';
import { Answer, CONNECTION_ERRORS, Outcome, isAnswer, send, tally } from './keep-alive-client';

const TIMEOUT_MS = 3_000;
const BUDGET_MS = TIMEOUT_MS + 5_000;
const LANES = 4;
/** Transitions per verification before a lane creates the next one. */
const CHANGES_PER_VERIFICATION = 12;
const LOAD_BEFORE_SIGTERM_MS = 2_500;
const SIGNAL_LATENCY_MS = 100;
const READINESS_LANES = 3;

/** Time for the service to parse the held-back request's first lines, however loaded the machine. */
const HELD_BACK_SETTLE_MS = 300;

/**
 * A readiness request whose last header line is held back: once the service has parsed its first
 * lines, its connection is busy, not idle, when SIGTERM comes, so the drain must wait for it and
 * answer it (a deterministic readiness probe). A connection error instead means the service had not
 * read a byte of it before the signal (it was idle, so closed): an outcome, not a throw.
 */
async function heldBackReadiness(port: number): Promise<{ finish(): Promise<Outcome> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write('GET /health/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<string | undefined>((resolve) => {
    socket.once('close', () => resolve(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
  await sleep(HELD_BACK_SETTLE_MS);
  return {
    finish: async () => {
      const sentAt = Date.now();
      if (!socket.destroyed) socket.write('\r\n');
      const error = await ended;
      if (error !== undefined) return { error, sentAt };
      const text = Buffer.concat(chunks).toString();
      const [head, body = ''] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      return {
        method: 'GET',
        status: Number(statusLine.split(' ')[1]),
        connection: headers.connection,
        body: body ? (JSON.parse(body) as Record<string, unknown>) : {},
        sentAt,
        answeredAt: Date.now(),
      };
    },
  };
}

describe.each(['api', 'all'] as const)('SIGTERM under continuous keep-alive load, APP_ROLE=%s', (role) => {
  const receiver = new CountingReceiver();
  let app: TestApp | undefined;
  let db: Pool;

  beforeAll(async () => {
    await receiver.start();
    // Deliveries stay in flight across the SIGTERM in the `all` role.
    receiver.reply = { status: 200, delayMs: 400 };
    db = runDb();
  });

  afterAll(async () => {
    if (app && app.process.exitCode === null && app.process.signalCode === null) await app.kill();
    await receiver.stop();
    await db.end();
  });

  it('stops taking work at once, answers what it read, commits nothing unanswered and exits 0 within the budget', async () => {
    app = await startApp({
      ...FAST_DELIVERY,
      APP_ROLE: role,
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_drain_${role}`,
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    const base = app.url;
    const { internal } = tokens();
    const account = await new ApiClient(base, tokens()).createAccount(`drain ${role}`, receiver.url);

    let signalledAt = 0;
    let stopped = false;
    const after: Answer[] = [];
    const unanswered: Array<{ error: string; path: string }> = [];
    const unexpected: string[] = [];
    /** `verification id:version` of every status change (creation included) the client saw answered. */
    const seen = new Set<string>();
    let answered = 0;

    const record = (outcome: Outcome, path: string): Answer | undefined => {
      if (!isAnswer(outcome)) {
        if (signalledAt === 0) unexpected.push(`${path}: ${outcome.error} before SIGTERM`);
        else if (!CONNECTION_ERRORS.has(outcome.error)) unexpected.push(`${path}: ${outcome.error}`);
        if (signalledAt !== 0) unanswered.push({ error: outcome.error, path });
        return undefined;
      }
      answered += 1;
      if (signalledAt !== 0 && outcome.answeredAt >= signalledAt) after.push(outcome);
      return outcome;
    };
    /** A lane ends at its first connection error after SIGTERM: the listener is gone. */
    const laneGoesOn = (outcome: Outcome): boolean => !stopped && (isAnswer(outcome) || signalledAt === 0);

    const listLane = async (): Promise<void> => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const path = '/api/v1/public/kyc/verifications?limit=20';
      for (;;) {
        const outcome = await send(agent, base, 'GET', path, account.secret);
        const answer = record(outcome, path);
        if (answer && answer.status !== 200) unexpected.push(`list ${answer.status}`);
        if (!laneGoesOn(outcome)) break;
      }
      agent.destroy();
    };

    const changeLane = async (lane: number): Promise<void> => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let n = 0; ; n += 1) {
        const created = await send(agent, base, 'POST', '/api/v1/internal/kyc/verifications', internal, {
          account_id: account.id,
          external_user_id: `drain-${role}-${lane}-${n}`,
        });
        const createdAnswer = record(created, 'create');
        if (createdAnswer?.status === 201) seen.add(`${String(createdAnswer.body.id)}:1`);
        else if (createdAnswer) unexpected.push(`create ${createdAnswer.status}`);
        if (!laneGoesOn(created) || !createdAnswer) break;
        const id = String(createdAnswer.body.id);
        for (let step = 0; step < CHANGES_PER_VERIFICATION; step += 1) {
          const status = step % 2 === 0 ? 'processing' : 'pending';
          const path = `/api/v1/internal/kyc/verifications/${id}/transitions`;
          const outcome = await send(agent, base, 'POST', path, internal, { status });
          const answer = record(outcome, 'transition');
          if (answer?.status === 200) seen.add(`${id}:${String(answer.body.version)}`);
          else if (answer) unexpected.push(`transition ${answer.status}`);
          if (!laneGoesOn(outcome)) return agent.destroy();
        }
      }
      agent.destroy();
    };

    /** Readiness answers the process wrote after it took the signal (they carry `Connection: close`). */
    const readiness: Array<{ status: number; code: unknown; details: unknown }> = [];
    const readinessLane = async (): Promise<void> => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (;;) {
        const outcome = await send(agent, base, 'GET', '/health/ready', '');
        const answer = record(outcome, '/health/ready');
        if (answer && signalledAt !== 0 && answer.connection?.toLowerCase() === 'close') {
          const error = answer.body.error as { code?: unknown; details?: unknown } | undefined;
          readiness.push({ status: answer.status, code: error?.code, details: error?.details });
        }
        if (!laneGoesOn(outcome)) break;
      }
      agent.destroy();
    };

    const child = app.process;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lanes = [
      ...Array.from({ length: LANES }, () => listLane()),
      ...Array.from({ length: LANES }, (_, i) => changeLane(i)),
      ...Array.from({ length: READINESS_LANES }, () => readinessLane()),
    ];
    await sleep(LOAD_BEFORE_SIGTERM_MS);
    if (role === 'all') await waitUntil(() => receiver.inFlight > 0, 10_000, 'deliveries in flight');
    const answeredBeforeSigterm = answered;
    const heldBack = await heldBackReadiness(app.port);
    signalledAt = Date.now();
    child.kill('SIGTERM');
    // Once the drain has shown itself to a lane (or after 5 s), the held-back request is completed.
    await waitUntil(
      () => unanswered.length > 0 || after.some((a) => a.connection === 'close'),
      5_000,
      'the drain',
      10,
    ).catch(() => undefined);
    const heldBackAnswer = await heldBack.finish();
    // Before the fix the process answered for its whole 23-25 s deadline; past that it is killed.
    const code = await Promise.race([exited, sleep(40_000).then(() => 'still running' as const)]);
    const exitMs = Date.now() - signalledAt;
    if (code === 'still running') await app.kill();
    stopped = true;
    await Promise.all(lanes);
    await app.db.end();
    app = undefined;

    // Every committed change (a verification's creation is its version 1) must have had its answer.
    const committed = await db.query<{ verification_id: string; version: number }>(
      `SELECT h.verification_id, h.version FROM verification_status_history h
         JOIN verifications v ON v.id = h.verification_id WHERE v.account_id = $1`,
      [account.id],
    );
    const committedUnanswered = committed.rows.filter((row) => !seen.has(`${row.verification_id}:${row.version}`));
    const keptAlive = after.filter((answer) => answer.connection?.toLowerCase() !== 'close');
    // A response written just before the process took the signal may reach the client after it.
    const lateKeptAlive = keptAlive.filter((answer) => answer.sentAt > signalledAt + SIGNAL_LATENCY_MS);
    const committedAfter = after.filter(
      (answer) => answer.method === 'POST' && (answer.status === 200 || answer.status === 201),
    ).length;

    report(`keep-alive drain (${role})`, {
      answered_before_sigterm: answeredBeforeSigterm,
      answered_after_sigterm: after.length,
      answered_after_sigterm_without_connection_close: keptAlive.length,
      readiness_after_sigterm: tally(readiness.map((entry) => entry.status)),
      held_back_readiness: isAnswer(heldBackAnswer)
        ? `${heldBackAnswer.status} connection=${heldBackAnswer.connection ?? 'none'}`
        : heldBackAnswer.error,
      unanswered: unanswered.length,
      unanswered_errors: [...new Set(unanswered.map((entry) => entry.error))].join('/') || 'none',
      committed_changes: committed.rows.length,
      committed_without_answer: committedUnanswered.length,
      changes_committed_after_sigterm: committedAfter,
      exit_code: String(code),
      exit_ms: exitMs,
    });

    expect(unexpected).toEqual([]);
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(BUDGET_MS);
    expect(lateKeptAlive).toEqual([]);
    expect(readiness.filter((entry) => entry.status !== 503)).toEqual([]);
    if (isAnswer(heldBackAnswer)) {
      expect(heldBackAnswer).toMatchObject({ status: 503, connection: 'close' });
      const heldBackError = heldBackAnswer.body.error as { code?: unknown; details?: unknown };
      readiness.push({ status: heldBackAnswer.status, code: heldBackError.code, details: heldBackError.details });
    } else {
      expect(CONNECTION_ERRORS.has(heldBackAnswer.error)).toBe(true);
    }
    // Readiness seen answering after the signal, by the held-back request or a polling lane.
    expect(readiness.length).toBeGreaterThan(0);
    for (const entry of readiness) {
      expect(entry.code).toBe('service_unavailable');
      expect(Array.isArray(entry.details) && entry.details.length > 0).toBe(true);
    }
    expect(committedUnanswered).toEqual([]);
  });
});
