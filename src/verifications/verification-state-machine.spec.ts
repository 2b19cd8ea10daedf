import { canTransition, isTerminal, timestampsAfter } from 'src/verifications/verification-state-machine';
import { VERIFICATION_STATUSES, type VerificationStatus } from 'src/verifications/verification.types';

const ALLOWED = new Set(['pending>processing', 'processing>pending', 'processing>approved', 'processing>rejected']);

describe('verification state machine', () => {
  const pairs = VERIFICATION_STATUSES.flatMap((from) => VERIFICATION_STATUSES.map((to) => [from, to] as const));

  it.each(pairs)('%s -> %s is allowed only when the contract says so', (from, to) => {
    expect(canTransition(from, to)).toBe(ALLOWED.has(`${from}>${to}`));
  });

  it('has exactly the four moves of the contract', () => {
    expect(pairs.filter(([from, to]) => canTransition(from, to))).toHaveLength(4);
  });

  it.each([
    ['pending', false],
    ['processing', false],
    ['approved', true],
    ['rejected', true],
  ] as [VerificationStatus, boolean][])('%s terminal: %s', (status, terminal) => {
    expect(isTerminal(status)).toBe(terminal);
  });

  describe('timestamps', () => {
    const t1 = new Date('2026-01-01T00:00:00.000Z');
    const t2 = new Date('2026-01-02T00:00:00.000Z');
    const t3 = new Date('2026-01-03T00:00:00.000Z');

    it('entering processing sets submitted_at', () => {
      expect(timestampsAfter('processing', { submittedAt: null, decidedAt: null }, t1)).toEqual({
        submittedAt: t1,
        decidedAt: null,
      });
    });

    it('a retake keeps submitted_at until the next submission overwrites it', () => {
      const retake = timestampsAfter('pending', { submittedAt: t1, decidedAt: null }, t2);
      expect(retake).toEqual({ submittedAt: t1, decidedAt: null });
      expect(timestampsAfter('processing', retake, t3)).toEqual({ submittedAt: t3, decidedAt: null });
    });

    it.each(['approved', 'rejected'] as VerificationStatus[])(
      'entering %s sets decided_at and keeps submitted_at',
      (status) => {
        expect(timestampsAfter(status, { submittedAt: t1, decidedAt: null }, t2)).toEqual({
          submittedAt: t1,
          decidedAt: t2,
        });
      },
    );
  });
});
