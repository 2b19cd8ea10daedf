import { ApiError } from 'src/common/api-error';
import { checkRange, parseTimestamp } from 'src/common/timestamps';

function issueOf(fn: () => unknown): { status: number; code: string; field: string | undefined } {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, field: error.details[0]?.field };
    throw error;
  }
  throw new Error('did not throw');
}

describe('parseTimestamp', () => {
  it.each([
    ['2026-11-22T01:02:03.456Z', '2026-11-22T01:02:03.456Z'],
    ['2026-11-22T01:02:03Z', '2026-11-22T01:02:03.000Z'],
    ['2026-11-22T01:02Z', '2026-11-22T01:02:00.000Z'],
    ['2026-11-22T01:02:03', '2026-11-22T01:02:03.000Z'],
    ['2026-11-22T03:02:03+02:00', '2026-11-22T01:02:03.000Z'],
    ['2026-11-21T20:02:03-0500', '2026-11-22T01:02:03.000Z'],
    ['2026-11-22', '2026-11-22T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-11-22T01:02:03.456000Z', '2026-11-22T01:02:03.456Z'],
    ['2026-11-22T01:02:03.4561Z', '2026-11-22T01:02:03.457Z'],
    ['2026-11-22T01:02:03.999999999Z', '2026-11-22T01:02:04.000Z'],
  ])('reads %p as %p', (raw, expected) => {
    expect(parseTimestamp('created_from', raw).toISOString()).toBe(expected);
  });

  it.each([
    '',
    'yesterday',
    '2026-13-01',
    '2026-02-30',
    '2025-02-29',
    '2026-11-22T25:00:00Z',
    '2026-11-22T01:02:03+25:00',
    '1700000000',
    '22/11/2026',
    '2026-11-22 01:02:03Z',
  ])('refuses %p naming the field', (raw) => {
    expect(issueOf(() => parseTimestamp('updated_to', raw))).toEqual({
      status: 400,
      code: 'validation_failed',
      field: 'updated_to',
    });
  });
});

describe('checkRange', () => {
  const early = new Date('2026-01-01T00:00:00.000Z');
  const late = new Date('2026-01-02T00:00:00.000Z');

  it('accepts from before or equal to to, and open ranges', () => {
    expect(() => checkRange('created_from', early, 'created_to', late)).not.toThrow();
    expect(() => checkRange('created_from', early, 'created_to', early)).not.toThrow();
    expect(() => checkRange('created_from', undefined, 'created_to', early)).not.toThrow();
  });

  it('refuses from after to', () => {
    expect(issueOf(() => checkRange('created_from', late, 'created_to', early))).toEqual({
      status: 400,
      code: 'validation_failed',
      field: 'created_from',
    });
  });
});
