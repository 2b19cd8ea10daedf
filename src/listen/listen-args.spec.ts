import { ListenUsageError, defaultStateFile, parseListenArgs } from 'src/listen/listen-args';
import { eventLine, summaryLine } from 'src/listen/listen-line';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const BASE = ['--base-url', 'http://127.0.0.1:3000/', '--forward-to', 'http://localhost:4000/hook'];

describe('parseListenArgs', () => {
  it('reads the options, the secret also from KYC_WEBHOOK_SECRET', () => {
    expect(parseListenArgs([...BASE, '--secret', SECRET], {})).toEqual({
      baseUrl: 'http://127.0.0.1:3000',
      secret: SECRET,
      forwardTo: 'http://localhost:4000/hook',
      stateFile: defaultStateFile('http://127.0.0.1:3000', SECRET),
    });
    const id = '0193A6F2-0000-7000-8000-000000000000';
    expect(parseListenArgs([...BASE, `--since=${id}`], { KYC_WEBHOOK_SECRET: SECRET })).toMatchObject({
      secret: SECRET,
      since: id.toLowerCase(),
    });
    expect(defaultStateFile('http://a', SECRET)).not.toContain(SECRET.slice(6, 20));
  });

  it.each([
    [['--forward-to', 'http://x/'], '--base-url is required'],
    [['--base-url', 'http://x'], '--forward-to is required'],
    [BASE, '--secret is required (or KYC_WEBHOOK_SECRET)'],
    [[...BASE, '--secret', 'nope'], '--secret must be the account secret, whsec_…'],
    [[...BASE, '--secret', SECRET, '--since', 'x'], '--since must be an event id (a UUID)'],
    [
      ['--base-url', 'ftp://x', '--forward-to', 'http://x', '--secret', SECRET],
      '--base-url must be an absolute http or https URL',
    ],
    [[...BASE, '--secret', SECRET, '--verbose'], 'unknown option --verbose'],
    [[...BASE, '--secret', SECRET, 'extra'], 'unexpected argument extra'],
    [[...BASE, '--secret', SECRET, '--secret', SECRET], '--secret given twice'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseListenArgs(argv, {})).toThrow(new ListenUsageError(message));
  });
});

describe('eventLine', () => {
  const at = new Date('2026-11-22T01:02:03.456Z');
  it('shows the type, verification, status change and the local answer', () => {
    const body = JSON.stringify({
      data: { previous_status: 'processing', verification: { id: 'v1', status: 'approved' } },
    });
    expect(eventLine(at, 'verification.status_changed', body, { status: 200, durationMs: 12 })).toBe(
      '2026-11-22T01:02:03.456Z  verification.status_changed  v1  processing → approved  200 in 12 ms',
    );
    expect(
      eventLine(
        at,
        'verification.redacted',
        JSON.stringify({ data: { reason: 'retention', verification: { id: 'v2' } } }),
        {
          error: 'local server down (connection refused)',
          durationMs: 1,
        },
      ),
    ).toBe(
      '2026-11-22T01:02:03.456Z  verification.redacted  v2  redacted (retention)  local server down (connection refused) in 1 ms',
    );
    expect(summaryLine(3, 2)).toBe('forwarded 3 events, 2 answered 2xx');
  });
});
