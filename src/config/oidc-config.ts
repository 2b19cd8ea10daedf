/** Operators' OIDC settings (contract: Operators). No Nest here, so it is unit-tested. */
export interface OidcConfig {
  /** OIDC_ISSUER_URL exactly as given: the `iss` tokens must carry. */
  readonly issuerUrl: string;
  /** OIDC_AUDIENCE: a token's `aud` must contain it. */
  readonly audience: string;
  /** OIDC_ROLES_CLAIM split at its dots: the path to the roles in a token's claims. */
  readonly rolesClaimPath: readonly string[];
  /** The dashboard's login (OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, PUBLIC_BASE_URL); null without it. */
  readonly login: { clientId: string; clientSecret: string; publicBaseUrl: string } | null;
}

type Env = Readonly<Record<string, string | undefined>>;
type Fail = (variable: string, reason: string) => Error;

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
const CLAIM_PATH = /^[^.\s]+(\.[^.\s]+)*$/;
const LOGIN = ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'PUBLIC_BASE_URL'] as const;

function given(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function httpUrl(name: string, value: string, fail: Fail): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw fail(name, 'must be a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw fail(name, 'must use https');
  return url;
}

/** Null when OIDC is off (neither variable set); a bad or half-given setting throws naming the variable. */
export function parseOidcConfig(env: Env, fail: Fail): OidcConfig | null {
  const issuer = given(env, 'OIDC_ISSUER_URL');
  const audience = given(env, 'OIDC_AUDIENCE');
  if (issuer === undefined && audience === undefined) {
    const stray = LOGIN.find((name) => given(env, name) !== undefined);
    if (stray) throw fail(stray, 'needs OIDC_ISSUER_URL and OIDC_AUDIENCE');
    return null;
  }
  if (issuer === undefined) throw fail('OIDC_ISSUER_URL', 'is required when OIDC_AUDIENCE is set');
  if (audience === undefined) throw fail('OIDC_AUDIENCE', 'is required when OIDC_ISSUER_URL is set');
  const url = httpUrl('OIDC_ISSUER_URL', issuer, fail);
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    throw fail('OIDC_ISSUER_URL', 'must use https (http only on a loopback address)');
  }
  if (url.search || url.hash) throw fail('OIDC_ISSUER_URL', 'must not have a query or fragment');
  const rolesClaim = given(env, 'OIDC_ROLES_CLAIM') ?? 'roles';
  if (!CLAIM_PATH.test(rolesClaim))
    throw fail('OIDC_ROLES_CLAIM', 'must be a claim name or a dot path such as realm_access.roles');
  const login = LOGIN.map((name) => given(env, name));
  const missing = LOGIN.find((_, i) => login[i] === undefined);
  if (missing !== undefined && login.some((value) => value !== undefined)) {
    throw fail(missing, `is required with ${LOGIN.filter((name) => name !== missing).join(' and ')}`);
  }
  const [clientId, clientSecret, publicBaseUrl] = login;
  if (publicBaseUrl !== undefined) httpUrl('PUBLIC_BASE_URL', publicBaseUrl, fail);
  return {
    issuerUrl: issuer,
    audience,
    rolesClaimPath: rolesClaim.split('.'),
    login:
      clientId && clientSecret && publicBaseUrl
        ? { clientId, clientSecret, publicBaseUrl: publicBaseUrl.replace(/\/+$/, '') }
        : null,
  };
}
