import { isIpLiteral, isPublicUnicast } from 'src/common/ip-policy';

export interface WebhookUrlPolicy {
  allowInsecure: boolean;
  allowPrivate: boolean;
}

/** Returns the problem with a webhook URL, or null when it may be registered. */
export function webhookUrlProblem(value: string, policy: WebhookUrlPolicy): string | null {
  if (value.length > 2048) return 'must be at most 2048 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  const protocols = policy.allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!protocols.includes(url.protocol)) return policy.allowInsecure ? 'must be an http or https URL' : 'must be an https URL';
  if (url.username || url.password) return 'must not contain user info';
  if (!url.hostname) return 'must have a host';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate) {
    if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point to a private address';
    if (isIpLiteral(host) && !isPublicUnicast(host)) return 'must not point to a private address';
  }
  return null;
}
