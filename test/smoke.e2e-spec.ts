import { createAccount, createVerificationInStatus } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates an account and lists its verification', async () => {
    const account = await createAccount(t);
    const v = await createVerificationInStatus(t, account.id, 'approved');
    const res = await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${account.secret}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((item: { id: string }) => item.id)).toEqual([v.id]);
  });
});
