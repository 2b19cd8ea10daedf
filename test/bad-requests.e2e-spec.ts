import { createAccount, createVerification, createVerificationInStatus, type CreatedAccount } from './helpers/factories';
import { dbSnapshot, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

type Auth = 'admin' | 'internal' | 'client' | 'none';

interface BadRequest {
  name: string;
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  path: string;
  auth: Auth;
  body?: unknown;
  raw?: { type: string; text: string };
  status: number;
  code: string;
  field?: string;
}

const LIST = '/api/v1/public/kyc/verifications';
const INTERNAL = '/api/v1/internal/kyc/verifications';
const ADMIN = '/api/v1/admin/accounts';
const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';
const metadataOf = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

describe('bad requests: every one is a 4xx with the contract body and changes nothing', () => {
  let t: TestApp;
  let account: CreatedAccount;
  let processingId: string;
  let pendingId: string;

  beforeAll(async () => {
    t = await startApp({ WEBHOOK_ALLOW_INSECURE_URLS: 'false', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    account = await createAccount(t);
    processingId = (await createVerificationInStatus(t, account.id, 'processing')).id;
    pendingId = (await createVerification(t, account.id)).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const cases = (): BadRequest[] => corpus({ accountId: account.id, processingId, pendingId });
  const names = corpus({ accountId: UNKNOWN_ID, processingId: UNKNOWN_ID, pendingId: UNKNOWN_ID }).map((c) => c.name);

  it('has a corpus of at least 40 distinct bad requests', () => {
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(40);
  });

  it('with private targets refused, a loopback URL still registers: it is refused at connect time instead', async () => {
    const res = await t.http.post(ADMIN).set('authorization', `Bearer ${t.adminToken}`).send({ name: 'loopback', webhook_url: 'https://127.0.0.1:9/hook' });
    expect(res.status).toBe(201);
  });

  it.each(names)('%s', async (name) => {
    const c = cases().find((item) => item.name === name) as BadRequest;
    const before = await dbSnapshot(t.db);
    let req = t.http[c.method](c.path);
    const token = { admin: t.adminToken, internal: t.internalToken, client: account.secret, none: '' }[c.auth];
    if (token) req = req.set('authorization', `Bearer ${token}`);
    const res = c.raw ? await req.set('content-type', c.raw.type).send(c.raw.text) : c.body !== undefined ? await req.send(c.body as object) : await req;
    try {
      expectError(res, c.status, c.code, c.field);
    } catch (error) {
      throw new Error(`${(error as Error).message}\nbody: ${JSON.stringify(res.body)}`, { cause: error });
    }
    expect(await dbSnapshot(t.db)).toEqual(before);
  });
});

interface Ids {
  accountId: string;
  processingId: string;
  pendingId: string;
}

function corpus({ accountId, processingId, pendingId }: Ids): BadRequest[] {
  const account = { id: accountId };
  return [
    // public list
    { name: 'unknown query parameter', method: 'get', path: `${LIST}?foo=1`, auth: 'client', status: 400, code: 'validation_failed', field: 'foo' },
    { name: 'repeated query parameter', method: 'get', path: `${LIST}?status=approved&status=rejected`, auth: 'client', status: 400, code: 'validation_failed', field: 'status' },
    { name: 'repeated limit', method: 'get', path: `${LIST}?limit=5&limit=5`, auth: 'client', status: 400, code: 'validation_failed', field: 'limit' },
    { name: 'limit 0', method: 'get', path: `${LIST}?limit=0`, auth: 'client', status: 400, code: 'validation_failed', field: 'limit' },
    { name: 'limit 101', method: 'get', path: `${LIST}?limit=101`, auth: 'client', status: 400, code: 'validation_failed', field: 'limit' },
    { name: 'limit not a number', method: 'get', path: `${LIST}?limit=ten`, auth: 'client', status: 400, code: 'validation_failed', field: 'limit' },
    { name: 'limit fractional', method: 'get', path: `${LIST}?limit=2.5`, auth: 'client', status: 400, code: 'validation_failed', field: 'limit' },
    { name: 'empty limit', method: 'get', path: `${LIST}?limit=`, auth: 'client', status: 400, code: 'validation_failed', field: 'limit' },
    { name: 'bad created_from', method: 'get', path: `${LIST}?created_from=yesterday`, auth: 'client', status: 400, code: 'validation_failed', field: 'created_from' },
    { name: 'impossible created_to', method: 'get', path: `${LIST}?created_to=2026-02-30T00:00:00Z`, auth: 'client', status: 400, code: 'validation_failed', field: 'created_to' },
    { name: 'bad updated_to', method: 'get', path: `${LIST}?updated_to=1700000000`, auth: 'client', status: 400, code: 'validation_failed', field: 'updated_to' },
    { name: 'created_from after created_to', method: 'get', path: `${LIST}?created_from=2026-02-01T00:00:00Z&created_to=2026-01-01T00:00:00Z`, auth: 'client', status: 400, code: 'validation_failed', field: 'created_from' },
    { name: 'updated_from after updated_to', method: 'get', path: `${LIST}?updated_from=2026-02-01T00:00:00.001Z&updated_to=2026-02-01T00:00:00.000Z`, auth: 'client', status: 400, code: 'validation_failed', field: 'updated_from' },
    { name: 'unknown status', method: 'get', path: `${LIST}?status=done`, auth: 'client', status: 400, code: 'validation_failed', field: 'status' },
    { name: 'status with an empty item', method: 'get', path: `${LIST}?status=approved,`, auth: 'client', status: 400, code: 'validation_failed', field: 'status' },
    { name: 'status upper case', method: 'get', path: `${LIST}?status=APPROVED`, auth: 'client', status: 400, code: 'validation_failed', field: 'status' },
    { name: 'empty status', method: 'get', path: `${LIST}?status=`, auth: 'client', status: 400, code: 'validation_failed', field: 'status' },
    { name: 'unknown sort', method: 'get', path: `${LIST}?sort=name`, auth: 'client', status: 400, code: 'validation_failed', field: 'sort' },
    { name: 'empty q', method: 'get', path: `${LIST}?q=`, auth: 'client', status: 400, code: 'validation_failed', field: 'q' },
    { name: 'q over 100 chars', method: 'get', path: `${LIST}?q=${'a'.repeat(101)}`, auth: 'client', status: 400, code: 'validation_failed', field: 'q' },
    { name: 'external_user_id over 255 chars', method: 'get', path: `${LIST}?external_user_id=${'a'.repeat(256)}`, auth: 'client', status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'garbled cursor', method: 'get', path: `${LIST}?cursor=garbage`, auth: 'client', status: 400, code: 'invalid_cursor', field: 'cursor' },
    { name: 'empty cursor', method: 'get', path: `${LIST}?cursor=`, auth: 'client', status: 400, code: 'invalid_cursor', field: 'cursor' },
    // public detail
    { name: 'malformed id', method: 'get', path: `${LIST}/not-a-uuid`, auth: 'client', status: 400, code: 'validation_failed', field: 'id' },
    { name: 'unknown id', method: 'get', path: `${LIST}/${UNKNOWN_ID}`, auth: 'client', status: 404, code: 'not_found' },
    { name: 'query parameter on detail', method: 'get', path: `${LIST}/${pendingId}?expand=1`, auth: 'client', status: 400, code: 'validation_failed', field: 'expand' },
    { name: 'POST on the list route', method: 'post', path: LIST, auth: 'client', body: {}, status: 405, code: 'method_not_allowed' },
    { name: 'DELETE on a verification', method: 'delete', path: `${LIST}/${pendingId}`, auth: 'client', status: 405, code: 'method_not_allowed' },
    // internal create
    { name: 'create without external_user_id', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id }, status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'create with empty external_user_id', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: '' }, status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'create with 256-char external_user_id', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u'.repeat(256) }, status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'create with numeric external_user_id', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 42 }, status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'create without account_id', method: 'post', path: INTERNAL, auth: 'internal', body: { external_user_id: 'u' }, status: 400, code: 'validation_failed', field: 'account_id' },
    { name: 'create with malformed account_id', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: 'acct-1', external_user_id: 'u' }, status: 400, code: 'validation_failed', field: 'account_id' },
    { name: 'create for an unknown account', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: UNKNOWN_ID, external_user_id: 'u' }, status: 404, code: 'not_found' },
    { name: 'create with an unknown field', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', colour: 'red' }, status: 400, code: 'validation_failed', field: 'colour' },
    { name: 'create with an unknown applicant field', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', applicant: { nickname: 'x' } }, status: 400, code: 'validation_failed' },
    { name: 'create with applicant as a string', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', applicant: 'Ada' }, status: 400, code: 'validation_failed', field: 'applicant' },
    { name: 'create with a bad email', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', applicant: { email: 'not-an-email' } }, status: 400, code: 'validation_failed', field: 'applicant.email' },
    { name: 'create with a bad date_of_birth', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', applicant: { date_of_birth: '1815-13-10' } }, status: 400, code: 'validation_failed', field: 'applicant.date_of_birth' },
    { name: 'metadata with 21 keys', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: metadataOf(21) }, status: 400, code: 'validation_failed', field: 'metadata' },
    { name: 'metadata key of 41 chars', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: { ['k'.repeat(41)]: 'v' } }, status: 400, code: 'validation_failed', field: 'metadata' },
    { name: 'metadata value of 501 chars', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: { k: 'v'.repeat(501) } }, status: 400, code: 'validation_failed', field: 'metadata' },
    { name: 'metadata with a number value', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: { k: 1 } }, status: 400, code: 'validation_failed', field: 'metadata' },
    { name: 'metadata nested object', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: { k: { a: 'b' } } }, status: 400, code: 'validation_failed', field: 'metadata' },
    { name: 'metadata as an array', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: ['a'] }, status: 400, code: 'validation_failed', field: 'metadata' },
    { name: 'malformed JSON', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'application/json', text: '{"account_id": ' }, status: 400, code: 'validation_failed' },
    { name: 'a JSON array body', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'application/json', text: '[]' }, status: 400, code: 'validation_failed' },
    { name: 'text/plain body', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'text/plain', text: 'hello' }, status: 415, code: 'unsupported_media_type' },
    { name: 'form body', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'application/x-www-form-urlencoded', text: 'external_user_id=u' }, status: 415, code: 'unsupported_media_type' },
    { name: 'body over 100 KB', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'application/json', text: JSON.stringify({ account_id: account.id, external_user_id: 'u', pad: 'x'.repeat(101 * 1024) }) }, status: 413, code: 'payload_too_large' },
    // internal transitions
    { name: 'rejected without reasons', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'rejected' }, status: 400, code: 'validation_failed', field: 'rejection_reasons' },
    { name: 'rejected with an empty reason list', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'rejected', rejection_reasons: [] }, status: 400, code: 'validation_failed', field: 'rejection_reasons' },
    { name: 'reasons on approve', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', rejection_reasons: ['other'] }, status: 400, code: 'validation_failed', field: 'rejection_reasons' },
    { name: 'reasons on retake', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'pending', rejection_reasons: ['document_unreadable'] }, status: 400, code: 'validation_failed', field: 'rejection_reasons' },
    { name: 'unknown rejection reason', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'rejected', rejection_reasons: ['bad_vibes'] }, status: 400, code: 'validation_failed', field: 'rejection_reasons' },
    { name: 'unknown target status', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'done' }, status: 400, code: 'validation_failed', field: 'status' },
    { name: 'missing target status', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: {}, status: 400, code: 'validation_failed', field: 'status' },
    { name: 'expected_version as a string', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', expected_version: '2' }, status: 400, code: 'validation_failed', field: 'expected_version' },
    { name: 'expected_version negative', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', expected_version: -1 }, status: 400, code: 'validation_failed', field: 'expected_version' },
    { name: 'bad document type', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', document: { type: 'library_card', country: 'GB' } }, status: 400, code: 'validation_failed', field: 'document.type' },
    { name: 'bad document country', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', document: { type: 'passport', country: 'XX' } }, status: 400, code: 'validation_failed', field: 'document.country' },
    { name: 'lower-case document country', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', document: { type: 'passport', country: 'gb' } }, status: 400, code: 'validation_failed', field: 'document.country' },
    { name: 'document without country', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', document: { type: 'passport' } }, status: 400, code: 'validation_failed', field: 'document.country' },
    { name: 'unknown transition field', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', note: 'x' }, status: 400, code: 'validation_failed', field: 'note' },
    { name: 'transition on a malformed id', method: 'post', path: `${INTERNAL}/123/transitions`, auth: 'internal', body: { status: 'processing' }, status: 400, code: 'validation_failed', field: 'id' },
    { name: 'transition on an unknown id', method: 'post', path: `${INTERNAL}/${UNKNOWN_ID}/transitions`, auth: 'internal', body: { status: 'processing' }, status: 404, code: 'not_found' },
    { name: 'forbidden move', method: 'post', path: `${INTERNAL}/${pendingId}/transitions`, auth: 'internal', body: { status: 'approved' }, status: 409, code: 'invalid_transition' },
    { name: 'GET on transitions', method: 'get', path: `${INTERNAL}/${pendingId}/transitions`, auth: 'internal', status: 405, code: 'method_not_allowed' },
    // admin
    { name: 'account without name', method: 'post', path: ADMIN, auth: 'admin', body: {}, status: 400, code: 'validation_failed', field: 'name' },
    { name: 'account with a numeric name', method: 'post', path: ADMIN, auth: 'admin', body: { name: 5 }, status: 400, code: 'validation_failed', field: 'name' },
    { name: 'account with a null name', method: 'post', path: ADMIN, auth: 'admin', body: { name: null }, status: 400, code: 'validation_failed', field: 'name' },
    { name: 'account with an http webhook_url', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x', webhook_url: 'http://example.com/hook' }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'account with user-info in webhook_url', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x', webhook_url: 'https://user:pw@example.com/hook' }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'account with a 2049-char webhook_url', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x', webhook_url: `https://example.com/${'a'.repeat(2029)}` }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'account with a relative webhook_url', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x', webhook_url: '/hook' }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'account with an ftp webhook_url', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x', webhook_url: 'ftp://example.com/hook' }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'account with an unknown field', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x', plan: 'gold' }, status: 400, code: 'validation_failed', field: 'plan' },
    { name: 'account get with malformed id', method: 'get', path: `${ADMIN}/xyz`, auth: 'admin', status: 400, code: 'validation_failed', field: 'id' },
    { name: 'account get unknown', method: 'get', path: `${ADMIN}/${UNKNOWN_ID}`, auth: 'admin', status: 404, code: 'not_found' },
    { name: 'patch with null name', method: 'patch', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { name: null }, status: 400, code: 'validation_failed', field: 'name' },
    { name: 'patch with empty name', method: 'patch', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { name: '' }, status: 400, code: 'validation_failed', field: 'name' },
    { name: 'patch with a numeric webhook_url', method: 'patch', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { webhook_url: 7 }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'patch with an http webhook_url', method: 'patch', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { webhook_url: 'http://example.com/' }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'patch with an unknown field', method: 'patch', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { secret: 'x' }, status: 400, code: 'validation_failed', field: 'secret' },
    { name: 'patch unknown account', method: 'patch', path: `${ADMIN}/${UNKNOWN_ID}`, auth: 'admin', body: { name: 'x' }, status: 404, code: 'not_found' },
    { name: 'rotate with negative grace', method: 'post', path: `${ADMIN}/${account.id}/secret/rotate`, auth: 'admin', body: { grace_period_seconds: -1 }, status: 400, code: 'validation_failed', field: 'grace_period_seconds' },
    { name: 'rotate with grace over a week', method: 'post', path: `${ADMIN}/${account.id}/secret/rotate`, auth: 'admin', body: { grace_period_seconds: 604801 }, status: 400, code: 'validation_failed', field: 'grace_period_seconds' },
    { name: 'rotate with a string grace', method: 'post', path: `${ADMIN}/${account.id}/secret/rotate`, auth: 'admin', body: { grace_period_seconds: '60' }, status: 400, code: 'validation_failed', field: 'grace_period_seconds' },
    { name: 'rotate with a fractional grace', method: 'post', path: `${ADMIN}/${account.id}/secret/rotate`, auth: 'admin', body: { grace_period_seconds: 1.5 }, status: 400, code: 'validation_failed', field: 'grace_period_seconds' },
    { name: 'rotate with an unknown field', method: 'post', path: `${ADMIN}/${account.id}/secret/rotate`, auth: 'admin', body: { grace: 5 }, status: 400, code: 'validation_failed', field: 'grace' },
    { name: 'rotate unknown account', method: 'post', path: `${ADMIN}/${UNKNOWN_ID}/secret/rotate`, auth: 'admin', body: {}, status: 404, code: 'not_found' },
    { name: 'query parameter on account get', method: 'get', path: `${ADMIN}/${account.id}?verbose=1`, auth: 'admin', status: 400, code: 'validation_failed', field: 'verbose' },
    { name: 'PUT on an account', method: 'put', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { name: 'x' }, status: 405, code: 'method_not_allowed' },
    { name: 'GET on the accounts collection', method: 'get', path: ADMIN, auth: 'admin', status: 405, code: 'method_not_allowed' },
    // input no DTO rule can catch
    { name: 'NUL in external_user_id on create', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'a\u0000b' }, status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'NUL in a metadata value', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: { k: 'v\u0000' } }, status: 400, code: 'validation_failed', field: 'metadata.k' },
    { name: 'NUL in an applicant name', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', applicant: { first_name: 'A\u0000' } }, status: 400, code: 'validation_failed', field: 'applicant.first_name' },
    { name: 'NUL in the external_user_id filter', method: 'get', path: `${LIST}?external_user_id=a%00b`, auth: 'client', status: 400, code: 'validation_failed', field: 'external_user_id' },
    { name: 'NUL in an account name', method: 'post', path: ADMIN, auth: 'admin', body: { name: 'x\u0000' }, status: 400, code: 'validation_failed', field: 'name' },
    { name: 'NUL in a webhook_url', method: 'patch', path: `${ADMIN}/${account.id}`, auth: 'admin', body: { webhook_url: 'https://a.example/\u0000' }, status: 400, code: 'validation_failed', field: 'webhook_url' },
    { name: 'a __proto__ body field', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'application/json', text: `{"account_id":"${account.id}","external_user_id":"u","__proto__":{"x":1}}` }, status: 400, code: 'validation_failed', field: '__proto__' },
    { name: 'a constructor body field', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', constructor: 'x' }, status: 400, code: 'validation_failed', field: 'constructor' },
    { name: 'a toString metadata key', method: 'post', path: INTERNAL, auth: 'internal', body: { account_id: account.id, external_user_id: 'u', metadata: { toString: 'x' } }, status: 400, code: 'validation_failed', field: 'metadata.toString' },
    { name: 'a prototype applicant field', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', applicant: { prototype: 'x' } }, status: 400, code: 'validation_failed', field: 'applicant.prototype' },
    { name: 'deeply nested JSON', method: 'post', path: INTERNAL, auth: 'internal', raw: { type: 'application/json', text: `{"account_id":"${account.id}","external_user_id":"u","metadata":${'['.repeat(5000)}${']'.repeat(5000)}}` }, status: 400, code: 'validation_failed' },
    { name: 'expected_version null', method: 'post', path: `${INTERNAL}/${processingId}/transitions`, auth: 'internal', body: { status: 'approved', expected_version: null }, status: 400, code: 'validation_failed', field: 'expected_version' },
    // routes
    { name: 'unknown route', method: 'get', path: '/api/v1/nothing-here', auth: 'none', status: 404, code: 'not_found' },
    { name: 'unknown route with credentials', method: 'post', path: '/api/v1/public/kyc/verifications/x/y/z', auth: 'client', body: {}, status: 404, code: 'not_found' },
  ];
}
