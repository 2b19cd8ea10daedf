import { Client } from 'pg';

/** Work on the server's maintenance database, for a bench database whose name must say bench. */
export async function withMaintenanceDb<T>(
  databaseUrl: string,
  work: (client: Client, name: string) => Promise<T>,
): Promise<T> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/bench/.test(name)) throw new Error(`Refusing to touch database "${name}": its name does not say bench`);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client, name);
  } finally {
    await client.end();
  }
}

/** A connection tuned for bulk seeding. */
export async function seedingClient(databaseUrl: string): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`SET maintenance_work_mem = '512MB'; SET work_mem = '256MB'; SET synchronous_commit = off`);
  return client;
}

/** Runs the statements two at a time (the machine has two cores). */
export async function inParallel(databaseUrl: string, statements: string[]): Promise<void> {
  const clients = await Promise.all([seedingClient(databaseUrl), seedingClient(databaseUrl)]);
  const queue = [...statements];
  try {
    await Promise.all(
      clients.map(async (client) => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) await client.query(next);
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}
