import { ApiError } from 'src/common/api-error';
import type { TransitionSource, TransitionStatements } from 'src/verifications/verification-transition-sql';
import { UNLOCKED_TRIES, transitionWithRetries } from 'src/verifications/verification-transition-tries';
import type { VerificationStatus } from 'src/verifications/verification.types';
import type { TransitionVerificationDto } from 'src/verifications/verifications.dto';

const ID = '0193a6f2-0000-7000-8000-000000000001';

/**
 * One verification row behind the two paths, applying the guarded write as the SQL does (same
 * version, not redacted). `race` runs between an unlocked read and its write, as a competing commit
 * would; in the locked path the row lock keeps it out.
 */
class FakeDatabase {
  row: TransitionSource = {
    id: ID,
    accountId: '0193a6f2-0000-7000-8000-0000000000aa',
    externalUserId: 'user-42',
    status: 'processing',
    version: 2,
    createdAt: new Date('2026-11-23T12:00:00.000Z'),
    updatedAt: new Date('2026-11-23T12:00:01.000Z'),
    submittedAt: new Date('2026-11-23T12:00:01.000Z'),
    decidedAt: null,
    applicant: { first_name: 'Ada', last_name: null, date_of_birth: null, email: null },
    document: null,
    rejectionReasons: [],
    metadata: {},
    redactedAt: null,
    webhookUrl: null,
  };
  race: (row: TransitionSource) => void = () => undefined;
  log: string[] = [];

  readonly unlocked: TransitionStatements = {
    read: async () => (this.log.push('read'), { ...this.row }),
    write: async (read, next) => {
      this.log.push('write');
      this.race(this.row);
      return this.write(read.version, next.status);
    },
  };

  readonly locked: TransitionStatements = {
    read: async () => (this.log.push('locked read'), { ...this.row }),
    write: async (read, next) => (this.log.push('locked write'), this.write(read.version, next.status)),
  };

  private write(readVersion: number, status: VerificationStatus): boolean {
    if (this.row.version !== readVersion || this.row.redactedAt !== null) return false;
    this.row = { ...this.row, status, version: this.row.version + 1 };
    return true;
  }

  transition(dto: TransitionVerificationDto) {
    return transitionWithRetries(ID, dto, { unlocked: this.unlocked, locked: (work) => work(this.locked) });
  }
}

/** A competing change that leaves the row in the same status, two versions on (a retake and a resubmission). */
const retakeAndResubmit = (row: TransitionSource) => Object.assign(row, { version: row.version + 2 });

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('transitionWithRetries', () => {
  it('reads, then writes once, unlocked', async () => {
    const db = new FakeDatabase();
    const { verification, event } = await db.transition({ status: 'approved' });
    expect(verification).toMatchObject({ status: 'approved', version: 3 });
    expect(event).toMatchObject({ previousStatus: 'processing', status: 'approved', verificationId: ID });
    expect(db.log).toEqual(['read', 'write']);
  });

  it('after a lost race, decides again on the row as it now is', async () => {
    const db = new FakeDatabase();
    let races = 1;
    db.race = (row) => races-- > 0 && retakeAndResubmit(row);
    const { verification, event } = await db.transition({ status: 'approved' });
    expect(verification).toMatchObject({ status: 'approved', version: 5 });
    expect(event).toMatchObject({ previousStatus: 'processing', status: 'approved' });
    expect(db.log).toEqual(['read', 'write', 'read', 'write']);
  });

  it('with expected_version, a lost race is the version_conflict of the new version, and nothing is written', async () => {
    const db = new FakeDatabase();
    let races = 1;
    db.race = (row) => races-- > 0 && retakeAndResubmit(row);
    const error = await refusal(db.transition({ status: 'approved', expected_version: 2 }));
    expect(error.code).toBe('version_conflict');
    expect(error.message).toContain('at version 4');
    expect(db.row.version).toBe(4);
  });

  it('a redaction between the read and the write refuses the move: the redacted row is not written', async () => {
    const db = new FakeDatabase();
    db.race = (row) => Object.assign(row, { redactedAt: new Date(), applicant: null });
    const error = await refusal(db.transition({ status: 'approved' }));
    expect(error.code).toBe('invalid_transition');
    expect(db.row).toMatchObject({ status: 'processing', version: 2, applicant: null });
    expect(db.log).toEqual(['read', 'write', 'read']);
  });

  it('after UNLOCKED_TRIES lost races, the next try holds the row lock and wins', async () => {
    const db = new FakeDatabase();
    db.race = retakeAndResubmit;
    const { verification } = await db.transition({ status: 'approved' });
    const unlocked = Array.from({ length: UNLOCKED_TRIES }, () => ['read', 'write']).flat();
    expect(db.log).toEqual([...unlocked, 'locked read', 'locked write']);
    expect(verification).toMatchObject({ status: 'approved', version: 2 + UNLOCKED_TRIES * 2 + 1 });
  });
});
