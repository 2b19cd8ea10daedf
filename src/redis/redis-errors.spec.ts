import { redisErrorMessage, withRedisCause } from 'src/redis/redis-errors';

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

function discarded(...reasons: string[]): Error {
  return Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
    previousErrors: reasons.map((reason) => new Error(reason)),
  });
}

describe('redisErrorMessage', () => {
  it('names the refusal behind a discarded transaction, once however many commands it refused', () => {
    expect(redisErrorMessage(discarded(OOM, OOM, OOM))).toBe(`${OOM} (Redis discarded the transaction)`);
  });

  it('keeps every distinct refusal', () => {
    expect(redisErrorMessage(discarded(OOM, 'NOSCRIPT No matching script.'))).toBe(
      `${OOM}; NOSCRIPT No matching script. (Redis discarded the transaction)`,
    );
  });

  it('leaves other errors, and an EXECABORT without its refusals, as they are', () => {
    expect(redisErrorMessage(new Error('Connection is closed.'))).toBe('Connection is closed.');
    expect(redisErrorMessage(discarded())).toBe('EXECABORT Transaction discarded because of previous errors.');
    expect(redisErrorMessage('plain')).toBe('plain');
  });
});

describe('withRedisCause', () => {
  it('rewrites only a discarded transaction, keeping the original as the cause', () => {
    const original = discarded(OOM);
    const explained = withRedisCause(original) as Error;
    expect(explained.message).toBe(`${OOM} (Redis discarded the transaction)`);
    expect(explained.cause).toBe(original);
    const other = new Error('Connection is closed.');
    expect(withRedisCause(other)).toBe(other);
  });
});
