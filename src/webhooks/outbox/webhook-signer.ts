import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one attempt: one `v1,<sig>` per active secret, space-separated. */
export function webhookHeaders(
  eventId: string,
  at: Date,
  body: string,
  secrets: readonly string[],
): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
