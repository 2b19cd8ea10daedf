/**
 * Runs `advance` for each account in turn; one account's failure (a lock time-out, say) does not stop
 * the accounts after it. Returns how many failed and the last failure's message.
 */
export async function advanceEach(
  accountIds: string[],
  advance: (accountId: string) => Promise<void>,
): Promise<{ failed: number; lastError?: string }> {
  let failed = 0;
  let lastError: string | undefined;
  for (const accountId of accountIds) {
    try {
      await advance(accountId);
    } catch (error) {
      failed += 1;
      lastError = error instanceof Error ? error.message : String(error);
    }
  }
  return { failed, lastError };
}
