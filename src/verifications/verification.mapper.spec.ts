import fc from 'fast-check';
import { Verification } from 'src/verifications/verification.entity';
import { toVerificationDetail, verificationDetailJson, verificationJson } from 'src/verifications/verification.mapper';

const verification = (metadata: Record<string, string>): Verification =>
  Object.assign(new Verification(), {
    id: '0190a0b0-0000-7000-8000-000000000001',
    accountId: '0190a0b0-0000-7000-8000-000000000002',
    externalUserId: 'user-1',
    status: 'approved',
    version: 3,
    createdAt: new Date('2026-11-01T10:00:00.000Z'),
    updatedAt: new Date('2026-11-01T10:05:00.000Z'),
    submittedAt: new Date('2026-11-01T10:01:00.000Z'),
    decidedAt: new Date('2026-11-01T10:05:00.000Z'),
    applicant: { first_name: 'Ada', last_name: null, date_of_birth: null, email: null },
    document: { type: 'passport', country: 'GB' },
    rejectionReasons: [],
    metadata,
    redactedAt: null,
  } satisfies Verification);

describe('verificationJson', () => {
  it('writes one text for a metadata map whatever order its keys arrived in (jsonb order, integer-like keys first)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string()), fc.nat(), (metadata, seed) => {
        const keys = Object.keys(metadata);
        const shuffled = keys.map((key, i) => keys[(i + seed) % keys.length] as string);
        const reordered = Object.fromEntries(shuffled.map((key) => [key, metadata[key] as string]));
        expect(verificationJson(verification(reordered))).toBe(verificationJson(verification(metadata)));
      }),
    );
    const text = verificationJson(verification({ bb: '1', a: '2', '10': '3', é: '4', '2': '5' }));
    expect(text).toContain('"metadata":{"2":"5","10":"3","a":"2","bb":"1","é":"4"}');
  });

  it('appends status_history as toVerificationDetail writes it', () => {
    const v = verification({ k: 'v' });
    const history = [
      { verificationId: v.id, version: 1, status: 'pending' as const, at: new Date('2026-11-01T10:00:00.000Z') },
      { verificationId: v.id, version: 2, status: 'processing' as const, at: new Date('2026-11-01T10:01:00.000Z') },
    ];
    expect(verificationDetailJson(verificationJson(v), history)).toBe(JSON.stringify(toVerificationDetail(v, history)));
    expect(verificationDetailJson(verificationJson(v), [])).toBe(JSON.stringify(toVerificationDetail(v, [])));
  });
});
