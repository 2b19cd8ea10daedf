import { ChangeAcknowledgements } from 'src/accounts/credential-acks';

describe('ChangeAcknowledgements', () => {
  it('counts acknowledgements that arrive before the wait begins', async () => {
    const acks = new ChangeAcknowledgements();
    acks.expect('acc c1');
    acks.received('acc c1');
    acks.received('acc c1');
    await expect(acks.wait('acc c1', 2, 1_000)).resolves.toBe(true);
  });

  it('resolves as soon as the last expected acknowledgement arrives', async () => {
    const acks = new ChangeAcknowledgements();
    acks.expect('acc c1');
    const waiting = acks.wait('acc c1', 2, 10_000);
    acks.received('acc c1');
    setTimeout(() => acks.received('acc c1'), 5);
    const started = Date.now();
    await expect(waiting).resolves.toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('gives up after the time-out, ignoring other changes and late acknowledgements', async () => {
    const acks = new ChangeAcknowledgements();
    acks.expect('acc c1');
    acks.received('acc c0');
    acks.received('acc c1');
    await expect(acks.wait('acc c1', 2, 20)).resolves.toBe(false);
    acks.received('acc c1');
    await expect(acks.wait('acc c1', 1, 20)).resolves.toBe(false);
  });

  it('does not count a change nobody expects', async () => {
    const acks = new ChangeAcknowledgements();
    acks.received('acc c1');
    acks.expect('acc c1');
    await expect(acks.wait('acc c1', 1, 20)).resolves.toBe(false);
  });
});
