import { ApiError } from 'src/common/api-error';
import { CursorCodec, cursorScope } from 'src/common/cursor';
import { KeysetListSpec, filter, keysetList, parseRanges, scopeParts, whereClauses } from 'src/common/keyset-list';
import { SqlParams } from 'src/common/sql-params';

interface Row {
  id: string;
  createdAt: Date;
}

const ACCOUNT = '0193a6f2-0000-7abc-8def-0123456789ab';
const codec = new CursorCodec(Buffer.alloc(32, 7));
const row = (second: number): Row => ({
  id: `0193a6f2-1234-7abc-8def-0000000000${String(second).padStart(2, '0')}`,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 59 - second)),
});

function spec(overrides: Partial<KeysetListSpec<Row, string>> = {}): KeysetListSpec<Row, string> {
  return {
    route: 'things',
    accountId: ACCOUNT,
    limit: undefined,
    cursor: undefined,
    select: (page) =>
      `SELECT id, created_at AS "createdAt" FROM things WHERE ${page.where} ${page.orderBy} LIMIT ${page.limit}`,
    filters: [filter('statuses', ['a', 'b'], (statuses, params) => `status = ANY(${params.add(statuses)}::varchar[])`)],
    ranges: [{ name: 'created', from: undefined, to: undefined }],
    sort: { column: 'created_at', direction: 'DESC', at: (r) => r.createdAt },
    toJson: (r) => r.id,
    ...overrides,
  };
}

function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  return promise.then(
    () => {
      throw new Error('did not throw');
    },
    (error: unknown) => {
      if (error instanceof ApiError) return { code: error.code, message: error.message };
      throw error;
    },
  );
}

describe('scopeParts', () => {
  it("keeps the verification list's scope byte for byte, so cursors already handed out stay valid", () => {
    const bounds = [
      { name: 'created', from: new Date('2026-01-01T00:00:00.000Z'), to: undefined },
      { name: 'updated', from: undefined, to: undefined },
    ];
    const filters = [
      filter('statuses', ['approved', 'rejected'], () => ''),
      filter('externalUserId', undefined, () => ''),
      filter('q', 'ann', () => ''),
    ];
    const parts = scopeParts(
      { route: 'verifications', accountId: 'acc', filters, scope: { sort: '-created_at' } },
      bounds,
    );
    expect(parts).toEqual({
      route: 'verifications',
      accountId: 'acc',
      statuses: ['approved', 'rejected'],
      externalUserId: undefined,
      q: 'ann',
      createdFrom: '2026-01-01T00:00:00.000Z',
      createdTo: undefined,
      updatedFrom: undefined,
      updatedTo: undefined,
      sort: '-created_at',
    });
    expect(cursorScope(parts)).toBe('YscVQv2nNTq7m9cfJXouaY');
  });

  it("keeps the delivery log's scope too, which has no sort", () => {
    const filters = [
      filter('statuses', undefined, () => ''),
      filter('verificationId', '0193a6f2-1234-7abc-8def-0123456789ab', () => ''),
    ];
    const bounds = [{ name: 'created', from: undefined, to: new Date('2026-01-02T00:00:00.000Z') }];
    expect(cursorScope(scopeParts({ route: 'webhook-events', accountId: 'acc', filters }, bounds))).toBe(
      'Vem8LSNc5yIE-9O01orJU9',
    );
  });
});

describe('whereClauses', () => {
  it('puts the account first, then the given filters, the ranges and the keyset condition, all bound', () => {
    const params = new SqlParams();
    const from = new Date('2026-01-01T00:00:00.000Z');
    const where = whereClauses(
      params,
      'acc',
      [filter('statuses', undefined, () => 'never'), filter('kind', 'x', (kind, p) => `kind = ${p.add(kind)}`)],
      [
        { name: 'created', from, to: undefined },
        { name: 'updated', from: undefined, to: from },
      ],
      { sort: { column: 'updated_at', direction: 'ASC' }, position: { value: '2026-01-01T00:00:00.000Z', id: 'id-1' } },
    );
    expect(where).toEqual([
      'account_id = $1',
      'kind = $2',
      'created_at >= $3',
      'updated_at < $4',
      '(updated_at, id) > ($5::timestamptz, $6::uuid)',
    ]);
    expect(params.values).toEqual(['acc', 'x', from, from, '2026-01-01T00:00:00.000Z', 'id-1']);
  });
});

describe('parseRanges', () => {
  it('reports a malformed bound before an inverted range, naming the field', () => {
    const ranges = [
      { name: 'created', from: '2026-02-01', to: '2026-01-01' },
      { name: 'updated', from: 'soon', to: undefined },
    ];
    expect(() => parseRanges(ranges)).toThrow('updated_from must be an ISO 8601 date-time');
    expect(() => parseRanges(ranges.slice(0, 1))).toThrow('created_from must not be after created_to');
  });
});

describe('keysetList', () => {
  it('reads limit + 1 rows in one step and pages with a cursor that resumes after the last row', async () => {
    const reads: [string, unknown[]][] = [];
    const read = (rows: Row[]) => async (sql: string, values: unknown[]) => (reads.push([sql, values]), rows);
    const page = await keysetList(codec, spec({ limit: '2' }), read([row(1), row(2), row(3)]));
    expect(page).toEqual({
      object: 'list',
      data: [row(1).id, row(2).id],
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect(reads[0]).toEqual([
      'SELECT id, created_at AS "createdAt" FROM things WHERE account_id = $1 AND status = ANY($2::varchar[]) ORDER BY created_at DESC, id DESC LIMIT $3',
      [ACCOUNT, ['a', 'b'], 3],
    ]);

    const next = await keysetList(codec, spec({ cursor: page.next_cursor ?? '' }), read([row(3)]));
    expect(next).toEqual({ object: 'list', data: [row(3).id], has_more: false, next_cursor: null });
    expect(reads[1][0]).toContain('AND (created_at, id) < ($3::timestamptz, $4::uuid) ORDER BY');
    expect(reads[1][1].slice(2)).toEqual([row(2).createdAt.toISOString(), row(2).id, 21]);
  });

  it('takes the cursor key as text from a row serialised by SQL, and resumes after it alike', async () => {
    interface TextRow {
      id: string;
      cursor_at: string;
      json: string;
    }
    const textRow = (second: number): TextRow => ({
      id: row(second).id,
      cursor_at: row(second).createdAt.toISOString(),
      json: `{"n":${second}}`,
    });
    const textSpec = (cursor?: string): KeysetListSpec<TextRow, string> => ({
      ...spec(),
      cursor,
      limit: '2',
      sort: { column: 'created_at', direction: 'DESC', at: (r) => r.cursor_at },
      toJson: (r) => r.json,
    });
    const page = await keysetList(codec, textSpec(), async () => [textRow(1), textRow(2), textRow(3)]);
    expect(page.data).toEqual(['{"n":1}', '{"n":2}']);
    // The same cursor as for the Date-keyed row: the two kinds of row page alike.
    const fromDates = await keysetList(codec, spec({ limit: '2' }), async () => [row(1), row(2), row(3)]);
    expect(page.next_cursor).toBe(fromDates.next_cursor);
    let values: unknown[] = [];
    await keysetList(codec, textSpec(page.next_cursor ?? ''), async (_sql, v) => ((values = v), []));
    expect(values.slice(2, 4)).toEqual([row(2).createdAt.toISOString(), row(2).id]);
  });

  it('lets a route shape its own page query', async () => {
    const select = jest.fn(() => 'SELECT 1');
    await keysetList(codec, spec({ select, limit: '5' }), async () => []);
    expect(select).toHaveBeenCalledWith({
      where: 'account_id = $1 AND status = ANY($2::varchar[])',
      orderBy: 'ORDER BY created_at DESC, id DESC',
      limit: '$3',
      column: 'created_at',
      direction: 'DESC',
    });
  });

  it('refuses a cursor made for other filters, and bad parameters before any read', async () => {
    const page = await keysetList(codec, spec({ limit: '1' }), async () => [row(1), row(2)]);
    const read = jest.fn(async () => []);
    const otherFilters = spec({ cursor: page.next_cursor ?? '', filters: [] });
    await expect(errorOf(keysetList(codec, otherFilters, read))).resolves.toEqual({
      code: 'invalid_cursor',
      message: 'cursor is invalid, or was made for other filters or another sort',
    });
    await expect(errorOf(keysetList(codec, spec({ limit: '101', cursor: 'garbled' }), read))).resolves.toEqual({
      code: 'validation_failed',
      message: 'limit must not be greater than 100',
    });
    expect(read).not.toHaveBeenCalled();
  });
});
