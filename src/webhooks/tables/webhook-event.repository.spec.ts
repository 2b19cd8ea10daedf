import { buildOutboxEvent, NO_WEBHOOK_URL } from 'src/webhooks/outbox/outbox-event';
import { insertOutboxEventFrom, outboxEventValues } from 'src/webhooks/tables/webhook-event.repository';

const AT = new Date('2026-11-23T12:00:00.000Z');
const change = {
  accountId: '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c11',
  verificationId: '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c12',
  previousStatus: 'processing',
  verification: { status: 'approved' },
};

describe('insertOutboxEventFrom', () => {
  it('numbers its parameters from `first`, one per value of outboxEventValues', () => {
    const sql = insertOutboxEventFrom('updated', 10);
    const placeholders = [...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]));
    const values = outboxEventValues(buildOutboxEvent(change, 'https://example.com/hook', AT));
    expect(placeholders).toEqual(values.map((_, i) => 10 + i));
    expect(sql).toMatch(
      /^INSERT INTO webhook_events \(.*\) SELECT .* FROM \(SELECT .* FROM updated\) v LEFT JOIN LATERAL/s,
    );
  });

  it('gives the values of an event with and without a webhook URL in the columns order', () => {
    const sql = insertOutboxEventFrom('updated', 1);
    const columns = /\(([^)]*)\)/.exec(sql)?.[1].split(', ') ?? [];
    const withUrl = buildOutboxEvent(change, 'https://example.com/hook', AT);
    const withoutUrl = buildOutboxEvent(change, null, AT);
    const row = (values: unknown[]) => Object.fromEntries(columns.map((column, i) => [column, values[i]]));
    expect(row(outboxEventValues(withUrl))).toMatchObject({
      id: withUrl.id,
      body: withUrl.body,
      created_at: AT,
      delivery_status: 'pending',
      last_error: null,
      next_attempt_at: AT,
    });
    expect(row(outboxEventValues(withoutUrl))).toMatchObject({
      id: withoutUrl.id,
      delivery_status: 'failed',
      last_error: NO_WEBHOOK_URL,
      next_attempt_at: null,
    });
  });
});
