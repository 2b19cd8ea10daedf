import {
  expiryOf,
  hasOperatorKeyShape,
  isOperatorKeyToken,
  newOperatorKey,
  operatorKeyHash,
} from 'src/operators/operator-key';

describe('operator keys', () => {
  it('are kyc_op_ and the base64url of 32 random bytes, each new', () => {
    const keys = new Set(Array.from({ length: 50 }, () => newOperatorKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) {
      expect(key).toMatch(/^kyc_op_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(key.slice('kyc_op_'.length), 'base64url')).toHaveLength(32);
      expect(hasOperatorKeyShape(key)).toBe(true);
    }
  });

  it('are stored as the hex SHA-256 of their text', () => {
    expect(operatorKeyHash('kyc_op_x')).toBe('0f84d3fc7be4cb3141ce4be4ac6597901ee323092cfd3a14af452b822acba104');
    expect(operatorKeyHash('kyc_op_x')).not.toBe(operatorKeyHash('kyc_op_y'));
  });

  it('are told apart from other tokens by the prefix; a wrong shape is not a key', () => {
    expect(isOperatorKeyToken('kyc_op_abc')).toBe(true);
    expect(isOperatorKeyToken('eyJhbGciOiJSUzI1NiJ9.e30.x')).toBe(false);
    expect(hasOperatorKeyShape('kyc_op_abc')).toBe(false);
    expect(hasOperatorKeyShape(`kyc_op_${'A'.repeat(43)}=`)).toBe(false);
  });

  it('expire the given number of days after their creation', () => {
    expect(expiryOf(new Date('2026-01-01T00:00:00.000Z'), 90).toISOString()).toBe('2026-04-01T00:00:00.000Z');
  });
});
