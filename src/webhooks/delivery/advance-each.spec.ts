import { advanceEach } from 'src/webhooks/delivery/advance-each';

describe('advanceEach', () => {
  it('goes on to the accounts after one that fails, and counts the failures', async () => {
    const advanced: string[] = [];
    const result = await advanceEach(['a', 'b', 'c', 'd'], async (id) => {
      if (id === 'b' || id === 'c') throw new Error(`canceling statement due to lock timeout (${id})`);
      advanced.push(id);
    });
    expect(advanced).toEqual(['a', 'd']);
    expect(result).toEqual({ failed: 2, lastError: 'canceling statement due to lock timeout (c)' });
  });

  it('reports nothing when every account moves on', async () => {
    await expect(advanceEach(['a'], async () => undefined)).resolves.toEqual({ failed: 0 });
  });
});
