// Using the KYC API from TypeScript: a typed client generated from the service's OpenAPI document.
//
//   npm install openapi-fetch standardwebhooks
//   npx openapi-typescript https://kyc.example.com/api/docs-json -o generated/api.d.ts
//
// Everything below is typed from that file: no casts. `npm run client:check` compiles this file
// against the document the service serves, under `tsc --strict`.
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './generated/api';

type Schemas = components['schemas'];
export type Verification = Schemas['VerificationResponseDto'];
export type VerificationStatus = Verification['status'];
export type ErrorBody = Schemas['ErrorBody'];
export type VerificationFilters = Omit<
  NonNullable<paths['/api/v1/public/kyc/verifications']['get']['parameters']['query']>,
  'cursor'
>;
/** The body the service POSTs to your webhook URL; the delivery log keeps it as `payload`. */
export type KycWebhook = Schemas['WebhookEventResponseDto']['payload'];

/** Authenticates with the account's webhook secret (`whsec_…`). */
export function kycClient(secret: string, baseUrl = 'https://kyc.example.com') {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${secret}` } });
}
export type KycClient = ReturnType<typeof kycClient>;

export class KycApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
  ) {
    super(body ? `${body.error.code}: ${body.error.message} (request ${body.error.request_id})` : `HTTP ${status}`);
  }
}

/**
 * Sends a request, returns its data, throws KycApiError otherwise. A 429 `rate_limited` is retried
 * after its `Retry-After` (seconds), at most twice.
 */
export async function call<T>(
  send: () => Promise<{ data?: T; error?: ErrorBody; response: Response }>,
  retries = 2,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const { data, error, response } = await send();
    if (data !== undefined) return data;
    if (error?.error.code === 'rate_limited' && attempt < retries) {
      const seconds = Number(response.headers.get('Retry-After') ?? '1');
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      continue;
    }
    throw new KycApiError(response.status, error);
  }
}

/** `status` takes a comma-separated list; this keeps each entry one of the contract's statuses. */
export function statuses(...list: VerificationStatus[]): string {
  return list.join(',');
}

/** One page of decided verifications created since `since` that match "lovelace", latest change first. */
export function recentDecisions(client: KycClient, since: Date) {
  return call(() =>
    client.GET('/api/v1/public/kyc/verifications', {
      params: {
        query: {
          status: statuses('approved', 'rejected'),
          created_from: since.toISOString(),
          q: 'lovelace',
          sort: '-updated_at',
          limit: 50,
        },
      },
    }),
  );
}

/** Every verification matching the filters, page by page: follows `next_cursor` until it is null. */
export async function* allVerifications(
  client: KycClient,
  filters: VerificationFilters = {},
): AsyncGenerator<Verification> {
  let cursor: string | undefined;
  do {
    const page = await call(() =>
      client.GET('/api/v1/public/kyc/verifications', { params: { query: { ...filters, cursor } } }),
    );
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}

/** One verification with its status history, or null when this account has none with that id. */
export async function findVerification(client: KycClient, id: string) {
  const { data, error, response } = await client.GET('/api/v1/public/kyc/verifications/{id}', {
    params: { path: { id } },
  });
  if (data) return data;
  // Another account's verification is "not found" too, never 403.
  if (error.error.code === 'not_found') return null;
  throw new KycApiError(response.status, error);
}

/** Prints one verification and its status history, oldest first. */
export async function printHistory(client: KycClient, id: string): Promise<void> {
  const verification = await findVerification(client, id);
  if (!verification) {
    console.log(`${id}: not found`);
    return;
  }
  // applicant and document are null until known, and after the personal data was erased.
  const name = verification.applicant
    ? [verification.applicant.first_name, verification.applicant.last_name].filter(Boolean).join(' ')
    : '(no applicant data)';
  console.log(`${verification.id} ${verification.external_user_id} ${name}: ${verification.status}`);
  for (const change of verification.status_history) {
    console.log(`  v${change.version} ${change.status} at ${change.at}`);
  }
  if (verification.status === 'rejected') console.log(`  reasons: ${verification.rejection_reasons.join(', ')}`);
  if (verification.document) {
    console.log(`  document: ${verification.document.type} (${verification.document.country})`);
  }
}

/** Reads the delivery log of one verification and redelivers each event that gave up. */
export async function redeliverFailed(client: KycClient, verificationId: string): Promise<number> {
  const log = await call(() =>
    client.GET('/api/v1/public/kyc/webhook-events', {
      params: { query: { verification_id: verificationId, delivery_status: 'failed', limit: 100 } },
    }),
  );
  for (const event of log.data) {
    const detail = await call(() =>
      client.GET('/api/v1/public/kyc/webhook-events/{id}', { params: { path: { id: event.id } } }),
    );
    for (const attempt of detail.attempts) {
      // response_status is null when the endpoint could not be reached or timed out.
      console.log(`  attempt ${attempt.number} at ${attempt.at}: ${attempt.response_status ?? attempt.error}`);
    }
    // A new delivery cycle with the same webhook-id and body: your handler's idempotency key still works.
    const again = await call(() =>
      client.POST('/api/v1/public/kyc/webhook-events/{id}/redeliver', { params: { path: { id: event.id } } }),
    );
    console.log(`${again.id} ${again.type}: ${again.delivery_status} after ${again.attempt_count} attempts`);
  }
  return log.data.length;
}

/**
 * Your webhook endpoint's health. The service disables it when it answers 410 Gone, or when an event
 * used up its retries after the endpoint had been failing for days; events are then held, not lost.
 * Once the endpoint is fixed, enabling it sends the held events again, oldest first.
 */
export async function checkEndpoint(client: KycClient): Promise<void> {
  const endpoint = await call(() => client.GET('/api/v1/public/kyc/webhook-endpoint'));
  const { health } = endpoint;
  console.log(
    `${endpoint.url ?? '(no url)'}: ${endpoint.status}, ${health.consecutive_failures} failures since ` +
      `${health.failing_since ?? 'the last success'}, last success ${health.last_success_at ?? 'never'}`,
  );
  if (endpoint.status === 'disabled' && endpoint.disabled_reason !== 'client') {
    console.log(
      `disabled (${endpoint.disabled_reason}) at ${endpoint.disabled_at}; ${endpoint.held_count} events held`,
    );
    const enabled = await call(() =>
      client.PATCH('/api/v1/public/kyc/webhook-endpoint', { body: { status: 'enabled' } }),
    );
    console.log(`enabled again: ${enabled.held_count} events still held`);
  }
}

/**
 * The signature already proved the body is the service's; this only picks the event types this code
 * knows. New types may be added: anything else is acknowledged and ignored.
 */
export function isKnownWebhook(body: unknown): body is KycWebhook {
  return (
    typeof body === 'object' &&
    body !== null &&
    'type' in body &&
    (body.type === 'verification.status_changed' || body.type === 'verification.redacted')
  );
}

function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return typeof value === 'string' ? value : '';
}

/**
 * A node:http handler for the webhook: verifies the Standard Webhooks signature over the raw body
 * (and refuses timestamps more than 5 minutes away), then hands known events to `onEvent`.
 */
export function webhookHandler(secret: string, onEvent: (event: KycWebhook, webhookId: string) => Promise<void>) {
  const webhook = new Webhook(secret);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const webhookId = header(req, 'webhook-id');
      let body: unknown;
      try {
        body = webhook.verify(Buffer.concat(chunks).toString('utf8'), {
          'webhook-id': webhookId,
          'webhook-timestamp': header(req, 'webhook-timestamp'),
          'webhook-signature': header(req, 'webhook-signature'),
        });
      } catch {
        res.writeHead(400).end('bad signature');
        return;
      }
      if (!isKnownWebhook(body)) {
        res.writeHead(204).end();
        return;
      }
      // Any 2xx within the time-out is a delivery; anything else is retried, so answer after the
      // event is safely queued on your side, and quickly.
      onEvent(body, webhookId).then(
        () => res.writeHead(204).end(),
        () => res.writeHead(503).end(),
      );
    });
  };
}

/** At-least-once and possibly out of order: dedupe on webhook-id, keep the highest version. */
const seen = new Set<string>();
const latestVersion = new Map<string, number>();

export async function handleEvent(event: KycWebhook, webhookId: string): Promise<void> {
  // A test event (POST /webhook-events/test) carries a made-up verification: never act on it.
  if ('test' in event && event.test) return;
  if (seen.has(webhookId)) return;
  seen.add(webhookId);
  const verification = event.data.verification;
  if ((latestVersion.get(verification.id) ?? 0) > verification.version) return;
  latestVersion.set(verification.id, verification.version);
  switch (event.type) {
    case 'verification.status_changed':
      console.log(
        `${verification.id}: ${event.data.previous_status} → ${verification.status} v${verification.version}`,
      );
      break;
    case 'verification.redacted':
      // reason: client_request or retention. Erase your own copies of the applicant's data.
      console.log(`${verification.id} redacted (${event.data.reason})`);
      break;
  }
}

async function main(): Promise<void> {
  const secret = process.env.KYC_WEBHOOK_SECRET ?? '';
  const client = kycClient(secret, process.env.KYC_API_URL ?? 'http://localhost:3000');

  const page = await recentDecisions(client, new Date(Date.now() - 7 * 24 * 3600 * 1000));
  console.log(`${page.data.length} recent decisions, more: ${page.has_more}`);

  let rejected = 0;
  for await (const verification of allVerifications(client, { status: statuses('rejected'), sort: 'created_at' })) {
    rejected++;
    if (rejected === 1) await printHistory(client, verification.id);
  }
  console.log(`${rejected} rejected in all`);

  await checkEndpoint(client);

  const first = page.data[0];
  if (first) console.log(`redelivered ${await redeliverFailed(client, first.id)} failed events`);

  createServer(webhookHandler(secret, handleEvent)).listen(8080);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
