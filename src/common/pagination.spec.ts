import { ApiError } from 'src/common/api-error';
import { keysetCondition, listPageJson, parseLimit } from 'src/common/pagination';
import { SqlParams } from 'src/common/sql-params';

function issueOf(fn: () => unknown): { status: number; code: string; field: string | undefined } {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, field: error.details[0]?.field };
    throw error;
  }
  throw new Error('did not throw');
}

describe('parseLimit', () => {
  it('defaults to 20 and accepts 1..100', () => {
    expect(parseLimit(undefined)).toBe(20);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('100')).toBe(100);
  });

  it.each(['0', '101', '-1', '1.5', 'ten', '', ' 5', '1e2', '99999'])('refuses %p', (raw) => {
    expect(issueOf(() => parseLimit(raw))).toEqual({ status: 400, code: 'validation_failed', field: 'limit' });
  });

  it('says "must not be greater than 100" like the contract example', () => {
    expect(() => parseLimit('101')).toThrow('limit must not be greater than 100');
  });
});

describe('keysetCondition', () => {
  it('binds the cursor values as parameters and compares in the sort direction', () => {
    const params = new SqlParams();
    params.add('account');
    const sql = keysetCondition(params, 'created_at', 'DESC', {
      value: '2026-01-01T00:00:00.000Z',
      id: '0193a6f2-1234-7abc-8def-0123456789ab',
    });
    expect(sql).toBe('(created_at, id) < ($2::timestamptz, $3::uuid)');
    expect(params.values).toEqual(['account', '2026-01-01T00:00:00.000Z', '0193a6f2-1234-7abc-8def-0123456789ab']);
    expect(keysetCondition(new SqlParams(), 'updated_at', 'ASC', { value: 'x', id: 'y' })).toBe(
      '(updated_at, id) > ($1::timestamptz, $2::uuid)',
    );
  });
});

describe('listPageJson', () => {
  it('joins JSON texts into the bytes JSON.stringify writes for the page', () => {
    const items = [
      { id: 'a', n: 1, s: 'é"\\\n' },
      { id: 'b', list: [], nested: { x: null } },
    ];
    const texts = items.map((item) => JSON.stringify(item));
    for (const [hasMore, cursor] of [
      [true, 'eyJh.sig-_'],
      [false, null],
    ] as const) {
      const page = { object: 'list' as const, data: texts, has_more: hasMore, next_cursor: cursor };
      expect(listPageJson(page)).toBe(JSON.stringify({ ...page, data: items }));
    }
    expect(listPageJson({ object: 'list', data: [], has_more: false, next_cursor: null })).toBe(
      '{"object":"list","data":[],"has_more":false,"next_cursor":null}',
    );
  });
});
