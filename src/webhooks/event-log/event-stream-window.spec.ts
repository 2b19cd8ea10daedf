import { LOOKBACK_MS, StreamWindow, streamMessage } from 'src/webhooks/event-log/event-stream-window';

const at = (ms: number): Date => new Date(Date.UTC(2026, 10, 22) + ms);
const event = (id: string, ms: number) => ({ id, createdAt: at(ms) });

describe('StreamWindow', () => {
  it('starts at its floor and re-reads LOOKBACK_MS behind it', () => {
    const window = new StreamWindow({ at: at(LOOKBACK_MS), id: 'f' });
    expect(window.next()).toEqual({ floor: { at: at(LOOKBACK_MS), id: 'f' }, from: at(0), sent: [] });
  });

  it('sends an event once, and one that commits late behind a newer one still once', () => {
    const window = new StreamWindow({ at: at(0), id: 'f' });
    expect(window.accept([event('b', 2_000)]).map((e) => e.id)).toEqual(['b']);
    expect(window.next().sent).toEqual(['b']);
    // 'a' was created before 'b' but committed after it: the next read finds it, and 'b' again.
    expect(window.accept([event('a', 1_000), event('b', 2_000)]).map((e) => e.id)).toEqual(['a']);
    expect(window.accept([event('a', 1_000), event('b', 2_000)])).toEqual([]);
  });

  it('forgets ids older than the window behind the newest, and moves the window with it', () => {
    const window = new StreamWindow({ at: at(0), id: 'f' });
    window.accept([event('a', 1_000), event('b', LOOKBACK_MS + 1_500)]);
    expect(window.next()).toEqual({ floor: { at: at(0), id: 'f' }, from: at(1_500), sent: ['b'] });
  });
});

describe('streamMessage', () => {
  it('is one SSE message whose data is one line of JSON with the exact body', () => {
    const body = '{"id":"e1","data":{"note":"line\\nbreak \u2028"}}';
    const message = streamMessage(
      { id: 'e1', type: 'verification.status_changed', createdAt: at(3), body },
      { 'content-type': 'application/json', 'webhook-id': 'e1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
    );
    const lines = message.split('\n');
    expect(lines.slice(0, 2)).toEqual(['id: e1', 'event: verification.status_changed']);
    expect(lines.slice(3)).toEqual(['', '']);
    expect(JSON.parse(lines[2].slice('data: '.length))).toEqual({
      id: 'e1',
      type: 'verification.status_changed',
      created_at: '2026-11-22T00:00:00.003Z',
      headers: { 'webhook-id': 'e1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
      body,
    });
  });
});
