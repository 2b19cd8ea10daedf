/** The longest name DNS can carry, in its ASCII (punycode) form and without the root's trailing dot. */
const MAX_HOST_LENGTH = 253;

/** Names the setting, so a developer with a local http receiver knows what to change. */
export const INSECURE_REFUSED =
  'must be an https URL (http is allowed with WEBHOOK_ALLOW_INSECURE_URLS=true, for development)';

export interface WebhookUrlPolicy {
  allowInsecure: boolean;
}

/**
 * Returns the problem with a webhook URL, or null when it may be registered. Private and loopback
 * targets are refused at connect time, after DNS resolution (rebinding-safe), not here: a name that
 * is public today may resolve privately tomorrow, and the contract checks it where it matters.
 */
export function webhookUrlProblem(value: string, policy: WebhookUrlPolicy): string | null {
  if (value.length > 2048) return 'must be at most 2048 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  const protocols = policy.allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!protocols.includes(url.protocol)) {
    if (policy.allowInsecure) return 'must be an http or https URL';
    return url.protocol === 'http:' ? INSECURE_REFUSED : 'must be an https URL';
  }
  if (url.username || url.password) return 'must not contain user info';
  if (!url.hostname) return 'must have a host';
  if (url.hostname.replace(/\.$/, '').length > MAX_HOST_LENGTH)
    return `must have a host of at most ${MAX_HOST_LENGTH} characters`;
  return null;
}
