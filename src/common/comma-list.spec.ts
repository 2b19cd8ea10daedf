import { commaListOf, parseCommaList } from 'src/common/comma-list';

describe('commaListOf', () => {
  const list = commaListOf(['pending', 'delivered', 'failed']);

  it('is the anchored list pattern the DTOs spelled out by hand', () => {
    expect(list.source).toBe('^(pending|delivered|failed)(,(pending|delivered|failed))*$');
  });

  it.each(['pending', 'failed,pending', 'failed,failed'])('accepts %p', (raw) => {
    expect(list.test(raw)).toBe(true);
  });

  it.each(['', ',', 'pending,', ' pending', 'Pending', 'pending;failed', 'pendingx'])('refuses %p', (raw) => {
    expect(list.test(raw)).toBe(false);
  });

  it('matches regex characters in a value literally', () => {
    expect(commaListOf(['a.b']).test('axb')).toBe(false);
  });
});

describe('parseCommaList', () => {
  it('drops duplicates and sorts, and leaves an absent list absent', () => {
    expect(parseCommaList('rejected,approved,rejected')).toEqual(['approved', 'rejected']);
    expect(parseCommaList(undefined)).toBeUndefined();
  });
});
