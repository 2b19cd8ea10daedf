import 'reflect-metadata';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DataSource, EntityManager } from 'typeorm';
import { CursorCodec } from 'src/common/cursor';
import { projectRoot } from 'src/config/project-root';
import type { PgPool } from 'src/database/pg-pool';
import { TRANSITION_SQL } from 'src/verifications/verification-transition-sql';
import { VerificationListService } from 'src/verifications/verification-list.service';
import { VERIFICATION_DETAIL_SQL, VerificationRepository } from 'src/verifications/verification.repository';
import { DELIVERY_SQL } from 'src/webhooks/delivery/delivery-store';
import { WebhookEventsService } from 'src/webhooks/event-log/webhook-events.service';
import { BACKLOG_CAP } from 'src/webhooks/queue/webhook-gauges.service';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';

// npm run sql:snapshots: the statements the service composes from its repositories' fragments, as
// PostgreSQL receives them, written to sql/ so that a reviewer reads the final SQL of a change in its
// diff. With --json it prints them instead (file name → file text): test/sql-snapshots.e2e-spec.ts
// compares that with sql/ and prepares each statement on a migrated database. The statements are
// composed by the service's own classes over a query function that records instead of running.

const ACCOUNT = '00000000-0000-4000-8000-000000000001';

/** Runs `work` over a query function that records each statement and answers `rows` (by default one row: a count
 * of 0, an event with an empty body, the promotion locks of ACCOUNT held). */
async function captured(
  work: (query: (sql: string) => Promise<unknown[]>) => Promise<unknown>,
  rows: unknown[] = [{ count: 0, body: '{}', locked: [ACCOUNT] }],
): Promise<string[]> {
  const statements: string[] = [];
  await work(async (sql: string) => {
    statements.push(sql);
    return rows;
  });
  return statements;
}

/** A DataSource and an EntityManager whose queries are recorded; only the repositories' query path is used. */
function recordingSource(query: (sql: string) => Promise<unknown[]>): { source: DataSource; manager: EntityManager } {
  const manager = { query } as unknown as EntityManager;
  const source = { query, manager } as unknown as DataSource;
  return { source, manager };
}

export async function composeAll(): Promise<Map<string, string>> {
  const all = new Map<string, string>([
    ['verifications/transition-read.sql', TRANSITION_SQL.read],
    ['verifications/transition-read-locked.sql', TRANSITION_SQL.readLocked],
    ['verifications/transition-write.sql', TRANSITION_SQL.write],
    ['verifications/detail.sql', VERIFICATION_DETAIL_SQL],
    ['webhooks/delivery-load.sql', DELIVERY_SQL.load],
    ['webhooks/delivery-record.sql', DELIVERY_SQL.record],
  ]);

  const page = async (name: string, query: Record<string, string>) => {
    const [sql] = await captured(async (read) => {
      const repository = { readPage: read } as unknown as VerificationRepository;
      await new VerificationListService(repository, new CursorCodec(Buffer.alloc(32, 1))).list(ACCOUNT, query);
    });
    all.set(`verifications/${name}.sql`, sql);
  };
  await page('list-first-page', {});
  await page('list-status', { status: 'approved,rejected' });
  await page('list-status-and-q', { status: 'approved,rejected', q: 'doe', sort: '-updated_at' });

  // The delivery log reads through its repository only; the service's other collaborators stay unused.
  const log = async (name: string, query: Record<string, string>) => {
    const [sql] = await captured(async (read) => {
      const events = { readPage: read } as unknown as WebhookEventRepository;
      const unused = undefined as never;
      const codec = new CursorCodec(Buffer.alloc(32, 1));
      const service = new WebhookEventsService(
        unused,
        events,
        unused,
        codec,
        unused,
        unused,
        unused,
        unused,
        unused,
        unused,
        unused,
        {
          webhookMaxInFlightPerAccount: 10,
        },
      );
      await service.list(ACCOUNT, query);
    }, []);
    all.set(`webhooks/${name}.sql`, sql);
  };
  await log('delivery-log-first-page', {});
  await log('delivery-log-statuses', { delivery_status: 'failed,held' });
  await log('delivery-log-verification-statuses', { delivery_status: 'failed', verification_id: ACCOUNT });

  const [pin, overdue, restore, , , promote, , deleteAged, countAged, countExpired, replay, backlog] = await captured(
    async (query) => {
      const { source, manager } = recordingSource(query);
      const events = new WebhookEventRepository(source, { query } as unknown as PgPool);
      await events.overdue(manager, 3, 500);
      await events.promoteWaiting(manager, [ACCOUNT], 10);
      await events.deleteFinishedOlderThan(90, 1_000);
      await events.countFinishedOlderThan(90);
      await new VerificationRepository(source).countExpired(365);
      await events.startWaitingCyclesMatching(manager, ACCOUNT, 'failed,delivered', [], 1_000);
      await events.backlog(BACKLOG_CAP);
    },
  );
  all.set('webhooks/bulk-replay-selection.sql', replay);
  all.set('webhooks/outbox-backlog.sql', backlog);
  all.set('webhooks/relay-overdue.sql', overdue);
  // Around it, in its transaction (src/database/sort-free-plan.ts).
  all.set('database/sort-free-plan-pin.sql', pin);
  all.set('database/sort-free-plan-restore.sql', restore);
  all.set('webhooks/promote-waiting.sql', promote);
  all.set('retention/delete-aged-events.sql', deleteAged);
  all.set('retention/count-aged-events.sql', countAged);
  all.set('retention/count-expired-verifications.sql', countExpired);
  return all;
}

/** The file's text: a header, then the statement with its indentation made even and trailing spaces gone. */
export function fileText(name: string, sql: string): string {
  const lines = sql.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
  const indents = lines
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.length - line.trimStart().length);
  const cut = indents.length > 0 ? Math.min(...indents) : 0;
  const body = [
    lines[0].trimStart(),
    ...lines.slice(1).map((line) => line.slice(Math.min(cut, line.length - line.trimStart().length))),
  ];
  return `-- ${name}: composed by the service, written by npm run sql:snapshots; edit the code, not this file.\n${body.join('\n')}\n`;
}

async function main(): Promise<void> {
  const statements = await composeAll();
  const files = Object.fromEntries([...statements].map(([name, sql]) => [name, fileText(name, sql)]));
  if (process.argv.includes('--json')) {
    process.stdout.write(JSON.stringify(files));
    return;
  }
  const dir = join(projectRoot(), 'sql');
  for (const old of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql')))
    rmSync(join(dir, old));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  console.log(`sql/: ${Object.keys(files).length} statements written`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
