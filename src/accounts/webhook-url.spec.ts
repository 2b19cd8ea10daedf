import { INSECURE_REFUSED, webhookUrlProblem } from 'src/accounts/webhook-url';

const strict = { allowInsecure: false };
const lax = { allowInsecure: true };

describe('webhookUrlProblem', () => {
  it.each(['https://example.com/hook', 'https://example.com:8443/a?b=c', 'https://93.184.216.34/x'])(
    'accepts %p',
    (url) => {
      expect(webhookUrlProblem(url, strict)).toBeNull();
    },
  );

  it.each([
    ['http://example.com/hook', 'https'],
    ['ftp://example.com/hook', 'https'],
    ['example.com/hook', 'absolute'],
    ['/relative', 'absolute'],
    ['https://user:pass@example.com/', 'user info'],
    ['https://user@example.com/', 'user info'],
    [`https://example.com/${'a'.repeat(2048)}`, '2048'],
  ])('refuses %p (%s)', (url, why) => {
    expect(webhookUrlProblem(url, strict)).toContain(why);
  });

  it('allows exactly 2048 characters', () => {
    const base = 'https://example.com/';
    expect(webhookUrlProblem(base + 'a'.repeat(2048 - base.length), strict)).toBeNull();
  });

  it('refuses a host over 253 characters (the DNS limit), also once IDN-encoded, and allows 253', () => {
    const host253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(host253).toHaveLength(253);
    expect(webhookUrlProblem(`https://${host253}/hook`, strict)).toBeNull();
    expect(webhookUrlProblem(`https://${host253}./hook`, strict)).toBeNull();
    expect(webhookUrlProblem(`https://x${host253}/hook`, strict)).toContain('253');
    // 243 characters of Unicode are 267 in the punycode (xn--) form that DNS sees.
    const unicode = Array.from({ length: 4 }, () => 'ü'.repeat(60)).join('.');
    expect(webhookUrlProblem(`https://${unicode}/hook`, strict)).toContain('253');
  });

  it('leaves private targets to the connect-time check', () => {
    expect(webhookUrlProblem('https://127.0.0.1/hook', strict)).toBeNull();
    expect(webhookUrlProblem('https://localhost:8443/hook', strict)).toBeNull();
  });

  it('names the setting that allows http, for development', () => {
    expect(webhookUrlProblem('http://example.com/hook', strict)).toBe(
      'must be an https URL (http is allowed with WEBHOOK_ALLOW_INSECURE_URLS=true, for development)',
    );
    expect(webhookUrlProblem('HTTP://example.com/hook', strict)).toBe(INSECURE_REFUSED);
    expect(webhookUrlProblem('ftp://example.com/hook', strict)).toBe('must be an https URL');
  });

  it('allows http only when configured', () => {
    expect(webhookUrlProblem('http://127.0.0.1:9000/hook', lax)).toBeNull();
    expect(webhookUrlProblem('ftp://127.0.0.1/hook', lax)).toContain('http');
    expect(webhookUrlProblem('http://u:p@127.0.0.1/hook', lax)).toContain('user info');
  });
});
