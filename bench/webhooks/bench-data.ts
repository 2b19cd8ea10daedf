import { ApiClient, BenchVerification } from './driver';

/** What a benchmark created through the service's own admin and internal APIs. */
export interface BenchData {
  accountIds: string[];
  /** Each account's webhook secret (also its public API credential), by account index. */
  secrets: string[];
  /** Verification i belongs to account i % accounts, `pending` at version 1. */
  verifications: BenchVerification[];
}

/**
 * `accounts` accounts through the admin API, account i with the webhook URL `webhookUrlFor(i)`,
 * then `count` verifications spread over them round robin through the internal API (16 at a time).
 */
export async function createBenchData(
  client: ApiClient,
  tokens: { admin: string; internal: string },
  accounts: number,
  count: number,
  webhookUrlFor: (account: number) => string,
): Promise<BenchData> {
  const secrets: string[] = [];
  const accountIds: string[] = [];
  for (let i = 0; i < accounts; i++) {
    const res = await client.request('POST', '/api/v1/admin/accounts', tokens.admin, {
      name: `Bench ${i}`,
      webhook_url: webhookUrlFor(i),
    });
    if (res.status !== 201) throw new Error(`creating an account: HTTP ${res.status} ${res.body}`);
    const account = JSON.parse(res.body) as { id: string; webhook_secret: string };
    accountIds.push(account.id);
    secrets.push(account.webhook_secret);
  }
  const verifications: BenchVerification[] = new Array<BenchVerification>(count);
  let nextIndex = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = nextIndex++; i < count; i = nextIndex++) {
        const account = i % accounts;
        const res = await client.request('POST', '/api/v1/internal/kyc/verifications', tokens.internal, {
          account_id: accountIds[account],
          external_user_id: `bench-user-${i}`,
          applicant: {
            first_name: 'Ada',
            last_name: 'Lovelace',
            date_of_birth: '1990-12-10',
            email: `ada.lovelace${i}@example.com`,
          },
          metadata: { plan: 'gold', source: 'bench' },
        });
        if (res.status !== 201) throw new Error(`creating a verification: HTTP ${res.status} ${res.body}`);
        const created = JSON.parse(res.body) as { id: string; version: number };
        verifications[i] = {
          id: created.id,
          account,
          secret: secrets[account] as string,
          status: 'pending',
          version: created.version,
        };
      }
    }),
  );
  return { accountIds, secrets, verifications };
}
