/**
 * The accounts feature's SQL for statements other features compose: the rule "which secrets are
 * active" and where an account's webhook URL lives exist here once. Each takes the SQL expression
 * of an account id in the caller's statement (a column or a parameter placeholder).
 */

/** A secret authenticates and signs until its expiry: none, or still ahead. */
export function activeSecretCondition(alias: string): string {
  return `(${alias}.expires_at IS NULL OR ${alias}.expires_at > now())`;
}

/** The account's webhook URL (null when it has none). */
export function webhookUrlOf(accountId: string): string {
  return `(SELECT a.webhook_url FROM accounts a WHERE a.id = ${accountId})`;
}

/** Ciphertexts of the account's active secrets, newest first, as a text[]. */
export function activeSecretCiphertextsOf(accountId: string): string {
  return `ARRAY(SELECT s.secret_ciphertext FROM account_secrets s
                 WHERE s.account_id = ${accountId} AND ${activeSecretCondition('s')}
                 ORDER BY s.created_at DESC)`;
}
