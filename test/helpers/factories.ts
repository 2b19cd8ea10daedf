import type { TestApp } from './test-app';

export interface CreatedAccount {
  id: string;
  secret: string;
  name: string;
  webhook_url: string | null;
}

let counter = 0;

export async function createAccount(
  t: TestApp,
  fields: { name?: string; webhook_url?: string | null } = {},
): Promise<CreatedAccount> {
  counter += 1;
  const res = await t.http
    .post('/api/v1/admin/accounts')
    .set('authorization', `Bearer ${t.adminToken}`)
    .send({
      name: fields.name ?? `Account ${counter}`,
      ...(fields.webhook_url !== undefined ? { webhook_url: fields.webhook_url } : {}),
    });
  if (res.status !== 201) throw new Error(`createAccount failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, secret: res.body.webhook_secret, name: res.body.name, webhook_url: res.body.webhook_url };
}

export interface VerificationJson {
  id: string;
  status: string;
  version: number;
  external_user_id: string;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

export async function createVerification(
  t: TestApp,
  accountId: string,
  fields: {
    external_user_id?: string;
    applicant?: Record<string, string | null>;
    metadata?: Record<string, string>;
  } = {},
): Promise<VerificationJson> {
  counter += 1;
  const res = await t.http
    .post('/api/v1/internal/kyc/verifications')
    .set('authorization', `Bearer ${t.internalToken}`)
    .send({ account_id: accountId, external_user_id: fields.external_user_id ?? `user-${counter}`, ...fields });
  if (res.status !== 201) throw new Error(`createVerification failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as VerificationJson;
}

export async function transition(
  t: TestApp,
  id: string,
  body: { status: string; rejection_reasons?: string[]; expected_version?: number; [key: string]: unknown },
): Promise<VerificationJson> {
  const res = await t.http
    .post(`/api/v1/internal/kyc/verifications/${id}/transitions`)
    .set('authorization', `Bearer ${t.internalToken}`)
    .send(body);
  if (res.status !== 200) throw new Error(`transition failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as VerificationJson;
}

/** Drives a verification to the given status through the allowed path. */
export async function createVerificationInStatus(
  t: TestApp,
  accountId: string,
  status: 'pending' | 'processing' | 'approved' | 'rejected',
  fields: Parameters<typeof createVerification>[2] = {},
): Promise<VerificationJson> {
  let v = await createVerification(t, accountId, fields);
  if (status === 'pending') return v;
  v = await transition(t, v.id, { status: 'processing' });
  if (status === 'processing') return v;
  return transition(t, v.id, status === 'rejected' ? { status, rejection_reasons: ['other'] } : { status });
}

/**
 * `count` events of the account written straight into webhook_events as `held` (its endpoint must be
 * disabled), created a millisecond apart from `ago` before now, oldest first: an endpoint's backlog at
 * any size without as many status changes.
 */
export async function insertHeldEvents(t: TestApp, accountId: string, count: number, ago: string): Promise<void> {
  await t.db.query(
    `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status)
     SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}',
            now() - $3::interval + n * interval '1 ms', 'held'
       FROM generate_series(1, $2::int) AS n`,
    [accountId, count, ago],
  );
}
