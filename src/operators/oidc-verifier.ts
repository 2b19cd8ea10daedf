import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from 'src/config/oidc-config';
import type { Actor } from 'src/http/actor';
import { type Claims, issuedInFuture, operatorFromClaims } from 'src/operators/oidc-claims';

/** The issuer's discovery document or JWKS could not be had, and no JWKS is cached: 503, not 401. */
export class IssuerUnreachableError extends Error {}

/** Asymmetric only: `none` and the HMAC algorithms (a public key used as a shared secret) are refused. */
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
const LEEWAY_S = 60;
/** An unknown `kid` (or a JWKS this old) fetches the JWKS again, at most this often. */
const REFRESH_COOLDOWN_MS = 30_000;
const MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 3_000;

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
  const body: unknown = await res.json();
  if (typeof body !== 'object' || body === null) throw new Error(`${url} did not answer a JSON object`);
  return body as Record<string, unknown>;
}

/**
 * Verifies operators' OIDC access tokens against the issuer's JWKS, found through its discovery
 * document. The JWKS is kept in memory: fetched on first use, again when a token names an unknown
 * `kid` or the copy is older than MAX_AGE_MS (each at most once per REFRESH_COOLDOWN_MS), and kept
 * when a refresh fails, so an issuer outage stops only the processes that never had its keys.
 */
export class OidcVerifier {
  private keys?: { set: JWTVerifyGetKey; fetchedAt: number };
  private jwksUri?: string;
  private lastAttempt = -Infinity;
  private loading?: Promise<void>;

  constructor(
    private readonly config: OidcConfig,
    private readonly warn: (message: string) => void,
  ) {}

  /** The operator a valid access token names, or null; IssuerUnreachableError when no JWKS can be had. */
  async verify(token: string): Promise<Actor | null> {
    const claims = await this.verifyClaims(token, this.config.audience);
    return claims && operatorFromClaims(claims, this.config.rolesClaimPath);
  }

  /**
   * The claims of a token signed by a key of the issuer's JWKS, issued by it for `audience` (the
   * dashboard's ID tokens: OIDC_CLIENT_ID), current within the leeway; null otherwise.
   */
  async verifyClaims(token: string, audience: string): Promise<Claims | null> {
    await this.ensureKeys();
    try {
      const { payload } = await jwtVerify(token, (header, input) => this.key(header, input), {
        issuer: this.config.issuerUrl,
        audience,
        algorithms: ALGORITHMS,
        clockTolerance: LEEWAY_S,
        requiredClaims: ['exp', 'sub'],
      });
      return issuedInFuture(payload, Date.now() / 1000, LEEWAY_S) ? null : payload;
    } catch (error) {
      if (error instanceof IssuerUnreachableError) throw error;
      return null;
    }
  }

  private async ensureKeys(): Promise<void> {
    const stale = !this.keys || Date.now() - this.keys.fetchedAt >= MAX_AGE_MS;
    if (!stale || (this.keys && !this.mayRefresh())) return;
    try {
      await this.refresh();
    } catch (error) {
      if (!this.keys) throw new IssuerUnreachableError((error as Error).message);
      this.warn(`OIDC: the JWKS could not be refreshed (${(error as Error).message}); the cached keys stay in use`);
    }
  }

  private async key(...args: Parameters<JWTVerifyGetKey>): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
    const keys = this.keys as NonNullable<OidcVerifier['keys']>;
    try {
      return await keys.set(...args);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || !this.mayRefresh()) throw error;
      await this.refresh().catch((refreshError: Error) => {
        this.warn(`OIDC: the JWKS could not be refreshed for an unknown kid (${refreshError.message})`);
        throw error;
      });
      return (this.keys as NonNullable<OidcVerifier['keys']>).set(...args);
    }
  }

  private mayRefresh(): boolean {
    return Date.now() - this.lastAttempt >= REFRESH_COOLDOWN_MS;
  }

  /** One fetch at a time, whoever asks. */
  private refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<void> {
    this.lastAttempt = Date.now();
    if (this.jwksUri === undefined) {
      const base = this.config.issuerUrl.replace(/\/+$/, '');
      const discovery = await fetchJson(`${base}/.well-known/openid-configuration`);
      if (discovery.issuer !== this.config.issuerUrl) {
        throw new Error(`the discovery document names the issuer ${String(discovery.issuer)}, not OIDC_ISSUER_URL`);
      }
      if (typeof discovery.jwks_uri !== 'string') throw new Error('the discovery document has no jwks_uri');
      this.jwksUri = discovery.jwks_uri;
    }
    const jwks = await fetchJson(this.jwksUri);
    if (!Array.isArray(jwks.keys)) throw new Error('the JWKS has no keys');
    this.keys = { set: createLocalJWKSet(jwks as unknown as JSONWebKeySet), fetchedAt: Date.now() };
  }
}
