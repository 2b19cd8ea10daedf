import { Writable } from 'node:stream';
import { runWithLogContext } from 'src/common/logging/log-context';
import { createRootLogger } from 'src/common/logging/logger';
import { NestPinoLogger } from 'src/common/logging/nest-logger';

function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const config = {
  logLevel: 'info' as const,
  nodeEnv: 'test',
  adminToken: 'admin-token-0123456789',
  internalApiToken: 'internal-token-0123456789',
  secretEncryptionKeys: [Buffer.alloc(32, 1)],
};

describe('root logger', () => {
  it('stamps lines written inside a request with its request id and account id', () => {
    const out = capture();
    const logger = createRootLogger(config, false, out.stream);
    const request: { accountId?: string } = {};
    runWithLogContext({ requestId: 'req-1', request }, () => {
      logger.info('before auth');
      request.accountId = 'acc-1';
      new NestPinoLogger(logger).warn({ step: 2 }, 'after auth', 'Service');
    });
    logger.info('outside');
    const [before, after, outside] = out.lines();
    expect(before).toMatchObject({ request_id: 'req-1', msg: 'before auth', level: 'info' });
    expect(before.account_id).toBeUndefined();
    expect(after).toMatchObject({
      request_id: 'req-1',
      account_id: 'acc-1',
      context: 'Service',
      step: 2,
      msg: 'after auth',
      level: 'warn',
    });
    expect(outside.request_id).toBeUndefined();
  });

  it('never writes a configured token, a webhook secret or an authorization header', () => {
    const out = capture();
    const logger = createRootLogger(config, false, out.stream);
    const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
    logger.info(
      { headers: { authorization: `Bearer ${secret}` } },
      `token ${config.adminToken} and ${config.internalApiToken}`,
    );
    new NestPinoLogger(logger).error(new Error(`failed for ${secret}`), undefined, 'Worker');
    const text = out
      .lines()
      .map((line) => JSON.stringify(line))
      .join('\n');
    for (const value of [
      secret,
      config.adminToken,
      config.internalApiToken,
      config.secretEncryptionKeys[0].toString('base64'),
    ]) {
      expect(text).not.toContain(value);
    }
    expect(text).toContain('[REDACTED]');
  });

  it('honours the level', () => {
    const out = capture();
    const logger = createRootLogger({ ...config, logLevel: 'warn' }, false, out.stream);
    logger.info('hidden');
    logger.warn('shown');
    expect(out.lines().map((line) => line.msg)).toEqual(['shown']);
  });
});
