import { PASS_SHARE_WINDOWS, splitByRoom } from 'src/webhooks/delivery/relay-room';

const WINDOW = 8;
const events = (accountId: string, n: number) => Array.from({ length: n }, (_, i) => ({ accountId, i }));

describe('splitByRoom', () => {
  it('queues none of an account that holds every slot of its window', () => {
    const { queued, parked } = splitByRoom(events('a', 5), new Map([['a', WINDOW]]), WINDOW);
    expect(queued).toEqual([]);
    expect(parked).toHaveLength(5);
  });

  it("queues an account's oldest, up to its share of a pass, and sets the rest aside", () => {
    const share = PASS_SHARE_WINDOWS * WINDOW;
    const { queued, parked } = splitByRoom(events('a', share + 3), new Map([['a', WINDOW - 1]]), WINDOW);
    expect(queued.map((event) => event.i)).toEqual([...Array(share).keys()]);
    expect(parked.map((event) => event.i)).toEqual([share, share + 1, share + 2]);
  });

  it('takes each account on its own, an account no slot of which is held included', () => {
    const mixed = [...events('a', 3), ...events('b', 2), ...events('c', 1)];
    const { queued, parked } = splitByRoom(
      mixed,
      new Map([
        ['a', 0],
        ['b', WINDOW + 1],
      ]),
      WINDOW,
    );
    expect(queued.map((event) => event.accountId)).toEqual(['a', 'a', 'a', 'c']);
    expect(parked.map((event) => event.accountId)).toEqual(['b', 'b']);
  });
});
