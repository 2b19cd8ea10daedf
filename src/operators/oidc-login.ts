import * as oidc from 'openid-client';
import type { OidcConfig } from 'src/config/oidc-config';
import type { Actor } from 'src/http/actor';
import { claimAt, operatorFromClaims } from 'src/operators/oidc-claims';
import { IssuerUnreachableError, type OidcVerifier } from 'src/operators/oidc-verifier';

export const CALLBACK_PATH = '/admin/auth/callback';
const SCOPE = 'openid profile email';
const TIMEOUT_S = 3;

/** What the browser's login needs to keep between the redirect and the callback (never sent to it). */
export interface LoginTransaction {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  /** The dashboard page asked for, to go back to once signed in. */
  readonly returnTo: string;
}

/** A callback that must not sign anyone in: a wrong `state`, a refused code, a bad ID token. */
export class LoginRefusedError extends Error {}

type Login = NonNullable<OidcConfig['login']>;

/**
 * The dashboard's sign-in: OpenID Connect's authorization code flow with PKCE (S256), `state` and
 * `nonce`, the code exchanged with `client_secret_basic`, by openid-client. The ID token is then
 * verified again by OidcVerifier (jose, the issuer's JWKS, asymmetric algorithms only), because
 * openid-client trusts the signature of a token it got straight from the token endpoint.
 */
export class OidcLogin {
  private client?: Promise<oidc.Configuration>;

  constructor(
    private readonly config: OidcConfig,
    private readonly login: Login,
    private readonly verifier: Pick<OidcVerifier, 'verifyClaims' | 'verify'>,
  ) {}

  get redirectUri(): string {
    return `${this.login.publicBaseUrl}${CALLBACK_PATH}`;
  }

  /** The issuer's authorization URL for a new login, and what the callback will check it against. */
  async start(returnTo: string): Promise<{ url: string; transaction: LoginTransaction }> {
    const client = await this.discovered();
    const transaction = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      returnTo,
    };
    const url = oidc.buildAuthorizationUrl(client, {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(transaction.codeVerifier),
      code_challenge_method: 'S256',
      state: transaction.state,
      nonce: transaction.nonce,
    });
    return { url: url.href, transaction };
  }

  /**
   * The operator the callback signs in. `query` is the callback's query string as received. Throws
   * LoginRefusedError for anything that must not sign in, IssuerUnreachableError when the issuer
   * cannot be reached.
   */
  async finish(query: string, transaction: LoginTransaction): Promise<Actor> {
    const client = await this.discovered();
    const params = new URLSearchParams(query);
    if (params.get('state') !== transaction.state) throw new LoginRefusedError('state does not match');
    let tokens: oidc.TokenEndpointResponse;
    try {
      tokens = await oidc.authorizationCodeGrant(
        client,
        new URL(`${this.redirectUri}?${params.toString()}`),
        {
          pkceCodeVerifier: transaction.codeVerifier,
          expectedState: transaction.state,
          expectedNonce: transaction.nonce,
          idTokenExpected: true,
        },
        { redirect_uri: this.redirectUri },
      );
    } catch (error) {
      if (isUnreachable(error)) throw new IssuerUnreachableError((error as Error).message);
      throw new LoginRefusedError((error as Error).message);
    }
    const idToken = tokens.id_token ?? '';
    const claims = await this.verifier.verifyClaims(idToken, this.login.clientId);
    if (!claims || claims.nonce !== transaction.nonce) throw new LoginRefusedError('the ID token is not valid');
    const operator = operatorFromClaims(claims, this.config.rolesClaimPath);
    if (!operator) throw new LoginRefusedError('the ID token names no subject');
    if (claimAt(claims, this.config.rolesClaimPath) !== undefined) return operator;
    // No roles claim in the ID token: the access token's, when it is a token of ours for the same operator.
    const fromAccess = tokens.access_token ? await this.verifier.verify(tokens.access_token) : null;
    return fromAccess?.id === operator.id ? { ...operator, roles: fromAccess.roles } : operator;
  }

  /** The issuer's discovery document, fetched once; a failure is tried again by the next login. */
  private discovered(): Promise<oidc.Configuration> {
    this.client ??= oidc
      .discovery(
        new URL(this.config.issuerUrl),
        this.login.clientId,
        undefined,
        oidc.ClientSecretBasic(this.login.clientSecret),
        {
          timeout: TIMEOUT_S,
          // http only reaches a loopback issuer (oidc-config.ts refuses any other).
          execute: this.config.issuerUrl.startsWith('http:') ? [oidc.allowInsecureRequests] : [],
        },
      )
      .catch((error: Error) => {
        this.client = undefined;
        throw new IssuerUnreachableError(error.message);
      });
    return this.client;
  }
}

function isUnreachable(error: unknown): boolean {
  const name = (error as { name?: string; code?: string }).name;
  return name === 'TypeError' || name === 'AbortError' || name === 'TimeoutError';
}
