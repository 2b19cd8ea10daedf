import { isDatabaseUnavailable } from 'src/database/dependency-errors';
import { NotPrimaryError } from 'src/database/primary-only';

describe('isDatabaseUnavailable', () => {
  it.each([
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    new Error('timeout exceeded when trying to connect'),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout expired'),
    new Error('Query runner already released. Cannot run queries anymore.'),
    new Error('Query read timeout'),
    Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }),
    Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    Object.assign(new Error('cannot execute SELECT FOR KEY SHARE in a read-only transaction'), { code: '25006' }),
    new NotPrimaryError('in recovery (a standby)'),
    Object.assign(new Error('query failed'), { driverError: Object.assign(new Error('x'), { code: '08006' }) }),
    new Error('wrapped', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
    Object.assign(new Error('AggregateError'), { errors: [Object.assign(new Error('a'), { code: 'ECONNREFUSED' })] }),
  ])('recognises %p', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    new Error('syntax error at or near "x"'),
    Object.assign(new Error('duplicate key'), { code: '23505' }),
    'ECONNREFUSED',
    null,
    undefined,
  ])('does not mistake %p for an outage', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
