import { parseOidcConfig } from 'src/config/oidc-config';

const fail = (variable: string, reason: string): Error => new Error(`${variable} ${reason}`);
const parse = (env: Record<string, string>) => parseOidcConfig(env, fail);
const BASE = { OIDC_ISSUER_URL: 'https://id.example/realms/kyc', OIDC_AUDIENCE: 'kyc-admin' };

describe('OIDC configuration', () => {
  it('is off with neither variable', () => {
    expect(parse({})).toBeNull();
  });

  it('takes both, with the default roles claim', () => {
    expect(parse(BASE)).toEqual({
      issuerUrl: 'https://id.example/realms/kyc',
      audience: 'kyc-admin',
      rolesClaimPath: ['roles'],
      login: null,
    });
    expect(parse({ ...BASE, OIDC_ROLES_CLAIM: 'realm_access.roles' })?.rolesClaimPath).toEqual([
      'realm_access',
      'roles',
    ]);
  });

  it.each([
    [{ OIDC_ISSUER_URL: BASE.OIDC_ISSUER_URL }, 'OIDC_AUDIENCE is required when OIDC_ISSUER_URL is set'],
    [{ OIDC_AUDIENCE: 'kyc' }, 'OIDC_ISSUER_URL is required when OIDC_AUDIENCE is set'],
    [
      { ...BASE, OIDC_ISSUER_URL: 'http://id.example' },
      'OIDC_ISSUER_URL must use https (http only on a loopback address)',
    ],
    [{ ...BASE, OIDC_ISSUER_URL: 'not a url' }, 'OIDC_ISSUER_URL must be a URL'],
    [
      { ...BASE, OIDC_ROLES_CLAIM: 'a..b' },
      'OIDC_ROLES_CLAIM must be a claim name or a dot path such as realm_access.roles',
    ],
    [{ OIDC_CLIENT_ID: 'x' }, 'OIDC_CLIENT_ID needs OIDC_ISSUER_URL and OIDC_AUDIENCE'],
    [{ ...BASE, OIDC_CLIENT_ID: 'x' }, 'OIDC_CLIENT_SECRET is required with OIDC_CLIENT_ID and PUBLIC_BASE_URL'],
  ])('refuses %j naming the variable', (env, message) => {
    expect(() => parse(env)).toThrow(message);
  });

  it('takes an http issuer on a loopback address, and the login settings together', () => {
    for (const host of ['127.0.0.1:8080', 'localhost', '[::1]:9000']) {
      expect(parse({ ...BASE, OIDC_ISSUER_URL: `http://${host}` })?.issuerUrl).toBe(`http://${host}`);
    }
    const login = { OIDC_CLIENT_ID: 'dash', OIDC_CLIENT_SECRET: 's3cret', PUBLIC_BASE_URL: 'https://kyc.example/' };
    expect(parse({ ...BASE, ...login })?.login).toEqual({
      clientId: 'dash',
      clientSecret: 's3cret',
      publicBaseUrl: 'https://kyc.example',
    });
  });
});
