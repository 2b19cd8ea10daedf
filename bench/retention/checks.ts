import type { Client } from 'pg';
import { PII_RETENTION_DAYS } from './floor';

async function count(client: Client, sql: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(sql);
  return rows[0]?.n ?? 0;
}

/**
 * After the run: every aged row of both pools redacted (the floor's, as far as it got), each with
 * one verification.redacted event, no personal data and no response excerpt left in its events;
 * the service's and the floor's rewritten payloads erase the same fields; and the seeded payloads
 * hold the verification with the keys the service's mapper writes, in its order.
 */
export async function checkErasure(client: Client, expectedService: number, floorRows: number): Promise<string[]> {
  const problems: string[] = [];
  // Fresh statistics after the rewrite of every aged row, so the checks below plan as hash joins.
  await client.query('ANALYZE verifications, webhook_events, webhook_attempts');
  const pool = `CASE WHEN coalesce(v.decided_at, v.updated_at) < now() - make_interval(days => ${PII_RETENTION_DAYS}) THEN 'service' ELSE 'floor' END`;
  const perPool = async (sql: string): Promise<Record<string, number>> => {
    const { rows } = await client.query<{ pool: string; n: number }>(sql);
    return Object.fromEntries(rows.map((row) => [row.pool, row.n]));
  };
  const redacted = await perPool(
    `SELECT ${pool} AS pool, count(*)::int AS n FROM verifications v WHERE v.redacted_at IS NOT NULL GROUP BY 1`,
  );
  const events = await perPool(
    `SELECT ${pool} AS pool, count(*)::int AS n FROM webhook_events e JOIN verifications v ON v.id = e.verification_id
      WHERE e.type = 'verification.redacted' GROUP BY 1`,
  );
  if ((redacted.service ?? 0) !== expectedService)
    problems.push(`service pool: ${redacted.service ?? 0} redacted, expected ${expectedService}`);
  if ((redacted.floor ?? 0) !== floorRows)
    problems.push(`floor pool: ${redacted.floor ?? 0} redacted, the floor counted ${floorRows}`);
  for (const name of ['service', 'floor']) {
    if ((events[name] ?? 0) !== (redacted[name] ?? 0))
      problems.push(
        `${name} pool: ${events[name] ?? 0} verification.redacted events for ${redacted[name] ?? 0} redacted`,
      );
  }
  const leftovers = await count(
    client,
    `SELECT count(*)::int AS n FROM webhook_events e JOIN verifications v ON v.id = e.verification_id
      WHERE v.redacted_at IS NOT NULL
        AND (e.body LIKE '%@%example.%' OR e.body LIKE '%"first_name"%'
             OR (e.type = 'verification.status_changed' AND e.redacted_at IS NULL))`,
  );
  if (leftovers > 0) problems.push(`${leftovers} events of redacted verifications still hold personal data`);
  const excerpts = await count(
    client,
    `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
       JOIN verifications v ON v.id = e.verification_id
      WHERE v.redacted_at IS NOT NULL AND a.response_body IS NOT NULL`,
  );
  if (excerpts > 0) problems.push(`${excerpts} attempts of redacted verifications still hold a response excerpt`);
  // One rewritten payload and one redacted event of each: the same fields, the same erased values.
  const sample = await client.query<{ pool: string; type: string; body: string }>(
    `SELECT DISTINCT ON (1, e.type) ${pool} AS pool, e.type, e.body
       FROM webhook_events e JOIN verifications v ON v.id = e.verification_id
      WHERE v.redacted_at IS NOT NULL ORDER BY 1, e.type, e.id`,
  );
  type Data = Record<string, unknown> & { verification: Record<string, unknown> };
  const data = (body: string): Data => (JSON.parse(body) as { data: Data }).data;
  const find = (pool: string, type: string) => sample.rows.find((row) => row.pool === pool && row.type === type)?.body;
  const shape = (body: string): string => {
    const v = data(body).verification;
    const erased = ['external_user_id', 'applicant', 'document', 'metadata'].map((k) => JSON.stringify(v[k]));
    return `${Object.keys(data(body)).sort().join()}|${Object.keys(v).sort().join()}|${erased.join()}|${typeof v.redacted_at}`;
  };
  for (const type of ['verification.status_changed', 'verification.redacted']) {
    const [service, floor] = [find('service', type), find('floor', type)];
    if (service && floor && shape(service) !== shape(floor))
      problems.push(`${type}: the floor's payload differs from the service's:\n  ${service}\n  ${floor}`);
  }
  // The seeded bodies hold the verification as the service's mapper writes it: its keys, in its order.
  const keys = (type: string): string => {
    const body = find('service', type);
    return body ? Object.keys(data(body).verification).join() : 'none';
  };
  const [seeded, mapped] = [keys('verification.status_changed'), keys('verification.redacted')];
  if (seeded !== mapped) problems.push(`seeded bodies: the verification's keys are ${seeded}, the mapper's ${mapped}`);
  return problems;
}
