import { Inject, Injectable } from '@nestjs/common';
import { AuditEventRepository, type AuditFilters } from 'src/audit/audit-event.repository';
import type { AuditEventJson } from 'src/audit/audit-entry';
import type { ListAuditEventsQueryDto } from 'src/audit/audit-events.dto';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { parseCommaList } from 'src/common/comma-list';
import { CursorCodec, cursorScope } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import { type ListPage, decodeCursor, parseLimit, toPage } from 'src/common/pagination';
import { checkRange, optionalTimestamp } from 'src/common/timestamps';

/** Entries read per statement while an export streams. */
export const EXPORT_BATCH = 1_000;

/**
 * Reading the trail: pages newest first (the admin's, or one account's for its client) and the
 * export oldest first in batches. Every read and export is itself recorded, before it is served.
 */
@Injectable()
export class AuditEventsService {
  constructor(
    private readonly entries: AuditEventRepository,
    private readonly trail: AuditTrail,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
  ) {}

  /** A page of the trail; `accountId` scopes it to one account (the client's view). */
  async list(query: ListAuditEventsQueryDto, accountId?: string): Promise<ListPage<AuditEventJson>> {
    const limit = parseLimit(query.limit);
    const filters = parseFilters(query, accountId);
    const scope = cursorScope({
      route: 'audit-events',
      ...filters,
      from: filters.from?.toISOString(),
      to: filters.to?.toISOString(),
    });
    const after = decodeCursor(this.cursors, scope, query.cursor);
    const target = accountId ? { type: 'account', id: accountId } : null;
    await this.trail.recordAlone({ action: 'audit.read', target, accountId: accountId ?? null, changes: [] });
    const rows = await this.entries.page(filters, after?.id ?? null, limit);
    return toPage(
      rows,
      limit,
      (row) => row,
      (row) => ({ value: row.at, id: row.id }),
      this.cursors,
      scope,
    );
  }

  /** The range an export covers; checked (400) before anything is recorded or sent. */
  exportRange(from: string | undefined, to: string | undefined): { from?: Date; to?: Date } {
    const range = { from: optionalTimestamp('from', from), to: optionalTimestamp('to', to) };
    checkRange('from', range.from, 'to', range.to);
    return range;
  }

  async recordExport(): Promise<void> {
    await this.trail.recordAlone({ action: 'audit.exported', changes: [] });
  }

  /** The entries in the range, oldest first, a batch at a time: a year of entries never sits in memory. */
  async *exported(range: { from?: Date; to?: Date }): AsyncGenerator<AuditEventJson[]> {
    for (let after = 0; ;) {
      const batch = await this.entries.batch(after, EXPORT_BATCH, range);
      if (batch.length > 0) yield batch;
      if (batch.length < EXPORT_BATCH) return;
      after = batch[batch.length - 1].sequence;
    }
  }
}

function parseFilters(query: ListAuditEventsQueryDto, accountId: string | undefined): AuditFilters {
  const from = optionalTimestamp('from', query.from);
  const to = optionalTimestamp('to', query.to);
  checkRange('from', from, 'to', to);
  return {
    actorId: query.actor_id,
    actorTypes: parseCommaList(query.actor_type),
    actions: parseCommaList(query.action),
    targetId: query.target_id,
    accountId: accountId ?? query.account_id?.toLowerCase(),
    outcome: query.outcome,
    from,
    to,
  };
}
