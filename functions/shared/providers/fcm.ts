import { createHash, createPrivateKey } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { OutboundError, type OutboundResponse, send } from '#shared/outbound';

/**
 * Firebase Cloud Messaging, both APIs: HTTP v1 (a service account, OAuth 2.0 access tokens) and
 * the legacy HTTP API (a server key) projects configured before v1 still use. Base URLs come from
 * settings (`functions/wiring/bindings.ts` `outboundHosts`), so tests point them at a local server speaking the
 * same protocol (`test/support/push/fcm-server.ts`).
 */

/**
 * What a mobile push came to, for the caller to act on: `dead_token` means the provider says the
 * token will never work again (delete the registration); `failed` may be transient or a setting to fix.
 */
export type MobileSendResult =
  | { readonly outcome: 'sent' }
  | { readonly outcome: 'dead_token' }
  | { readonly outcome: 'failed'; readonly status?: number; readonly reason: string };

/** The fields of a Google service account key file this module uses. */
export interface FcmServiceAccount {
  readonly client_email: string;
  /** PEM PKCS#8 RSA key (`-----BEGIN PRIVATE KEY-----`). */
  readonly private_key: string;
  /**
   * The token endpoint the key file names. Kept for the record only: the endpoint used is
   * `{oauthBaseUrl}/token`, so that a setting can point it at a test server.
   */
  readonly token_uri?: string;
}

export interface MobileNotification {
  readonly title: string;
  readonly body: string;
  /** FCM only carries string values in `data`. */
  readonly data: Readonly<Record<string, string>>;
}

const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
/** The longest lifetime Google accepts for a JWT bearer assertion. */
const ASSERTION_LIFETIME_SECONDS = 3600;
/** An access token is replaced this long before it expires, so none expires on its way to FCM. */
const TOKEN_RENEW_MARGIN_MS = 60_000;
/** Legacy `results[].error` values meaning the token is gone for good. */
const LEGACY_DEAD_TOKEN_ERRORS = new Set(['NotRegistered', 'InvalidRegistration']);

/**
 * Reads a service account key file (the JSON Google hands out) and checks its key, so a bad
 * setting fails when it is saved, not at the first push.
 * @throws Error naming what is wrong: not JSON, a missing field, or a key that is not PKCS#8 RSA
 */
export function parseServiceAccount(json: string): FcmServiceAccount {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error('The FCM service account is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('The FCM service account must be a JSON object (the key file from Google Cloud)');
  const { client_email, private_key, token_uri } = value as Record<string, unknown>;
  if (typeof client_email !== 'string' || client_email === '') throw new Error('The FCM service account has no client_email');
  if (typeof private_key !== 'string' || private_key === '') throw new Error('The FCM service account has no private_key');
  if (token_uri !== undefined && typeof token_uri !== 'string') throw new Error('The FCM service account token_uri must be a string');
  checkRsaPkcs8(private_key);
  return token_uri === undefined ? { client_email, private_key } : { client_email, private_key, token_uri };
}

/** The checks jose's `importPKCS8(pem, 'RS256')` makes, done synchronously. */
function checkRsaPkcs8(pem: string): void {
  // jose only reads the PKCS#8 label; a PKCS#1 `BEGIN RSA PRIVATE KEY` would import in Node and fail in jose.
  if (!pem.trimStart().startsWith('-----BEGIN PRIVATE KEY-----'))
    throw new Error('The FCM service account private_key must be a PEM PKCS#8 key (-----BEGIN PRIVATE KEY-----)');
  let type: string | undefined;
  try {
    type = createPrivateKey({ key: pem, format: 'pem' }).asymmetricKeyType;
  } catch {
    throw new Error('The FCM service account private_key is not a readable PEM private key');
  }
  if (type !== 'rsa') throw new Error(`The FCM service account private_key must be an RSA key, not ${type ?? 'unknown'}`);
}

/**
 * Sends through the legacy HTTP API (`/fcm/send` with a server key). It answers 200 for a token
 * that failed too; the token's fate is in `results[0].error`.
 */
export async function sendFcmLegacy(input: {
  baseUrl: string;
  serverKey: string;
  token: string;
  notification: MobileNotification;
  /** Connecting and the whole answer. @default config.OUTBOUND_TIMEOUT_MS */
  timeoutMs?: number;
}): Promise<MobileSendResult> {
  const { title, body, data } = input.notification;
  let response: OutboundResponse;
  try {
    response = await send({
      target: 'provider',
      url: `${trimSlash(input.baseUrl)}/fcm/send`,
      method: 'POST',
      headers: { authorization: `key=${input.serverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: input.token, notification: { title, body }, data }),
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
    });
  } catch (error) {
    return transportFailure(error);
  }
  if (response.status !== 200) return { outcome: 'failed', status: response.status, reason: `HTTP ${response.status}` };
  const answer = parseJson(response.body) as { failure?: unknown; results?: { error?: unknown }[] } | undefined;
  const result = Array.isArray(answer?.results) ? answer.results[0] : undefined;
  if (typeof result !== 'object' || result === null) return { outcome: 'failed', status: 200, reason: 'malformed answer' };
  if (typeof result.error === 'string') {
    if (LEGACY_DEAD_TOKEN_ERRORS.has(result.error)) return { outcome: 'dead_token' };
    return { outcome: 'failed', status: 200, reason: result.error };
  }
  return { outcome: 'sent' };
}

/** Sends through the HTTP v1 API with an access token of the service account (fetched once an hour per instance). */
export async function sendFcmV1(input: {
  baseUrl: string;
  oauthBaseUrl: string;
  projectId: string;
  serviceAccount: FcmServiceAccount;
  token: string;
  notification: MobileNotification;
  /** Connecting and the whole answer of the send (the token request keeps the default). @default config.OUTBOUND_TIMEOUT_MS */
  timeoutMs?: number;
}): Promise<MobileSendResult> {
  const { title, body, data } = input.notification;
  let accessToken: string;
  try {
    accessToken = await accessTokenFor(input.serviceAccount, trimSlash(input.oauthBaseUrl));
  } catch (error) {
    if (error instanceof TokenError) return { outcome: 'failed', ...(error.status ? { status: error.status } : {}), reason: error.message };
    return transportFailure(error);
  }
  let response: OutboundResponse;
  try {
    response = await send({
      target: 'provider',
      url: `${trimSlash(input.baseUrl)}/v1/projects/${encodeURIComponent(input.projectId)}/messages:send`,
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: { token: input.token, notification: { title, body }, data } }),
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
    });
  } catch (error) {
    return transportFailure(error);
  }
  if (response.status === 200) return { outcome: 'sent' };
  if (response.status === 401) forgetAccessToken(input.serviceAccount, trimSlash(input.oauthBaseUrl), accessToken);
  return v1Failure(response);
}

/** The shape of a Google API error (`google.rpc.Status`) as far as this module reads it. */
interface GoogleError {
  readonly status?: unknown;
  readonly message?: unknown;
  readonly details?: readonly { readonly errorCode?: unknown; readonly fieldViolations?: readonly { readonly field?: unknown }[] }[];
}

/**
 * Reads a failed v1 answer. Dead: `UNREGISTERED` (the app was uninstalled or the token
 * expired), and an `INVALID_ARGUMENT` about the token itself (it was never valid); an
 * `INVALID_ARGUMENT` about another field is our request's fault and the token is kept.
 */
function v1Failure(response: OutboundResponse): MobileSendResult {
  const error = (parseJson(response.body) as { error?: GoogleError } | undefined)?.error;
  const details: NonNullable<GoogleError['details']> = Array.isArray(error?.details) ? error.details : [];
  const errorCode = details.map((detail) => detail.errorCode).find((code) => typeof code === 'string');
  const status = typeof error?.status === 'string' ? error.status : undefined;
  // Only FCM's own verdict on the token: a bare 404 (a wrong base URL or project id, a proxy) must
  // not delete every device of the project.
  if (errorCode === 'UNREGISTERED') return { outcome: 'dead_token' };
  if (response.status === 400 && (status === 'INVALID_ARGUMENT' || errorCode === 'INVALID_ARGUMENT')) {
    const namesToken =
      details.some((detail) => Array.isArray(detail.fieldViolations) && detail.fieldViolations.some((v) => v.field === 'message.token')) ||
      (typeof error?.message === 'string' && /registration token/i.test(error.message));
    if (namesToken) return { outcome: 'dead_token' };
  }
  return { outcome: 'failed', status: response.status, reason: errorCode ?? status ?? `HTTP ${response.status}` };
}

/** The token endpoint refused or answered nonsense; its message is the failure's reason. */
class TokenError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TokenError';
  }
}

interface CachedToken {
  readonly accessToken: string;
  /** Epoch ms after which it is not used any more (the expiry less the margin). */
  readonly renewAt: number;
}

/**
 * Module scope so a warm instance reuses its access token for an hour instead of asking Google
 * before every push; one entry per service account and token endpoint.
 */
const tokens = new Map<string, CachedToken>();
/** Fetches under way, so concurrent pushes of a cold instance share one token request. */
const fetching = new Map<string, Promise<CachedToken>>();

/**
 * The whole credential names the entry, private key included: two tenants configuring the same
 * `client_email` (by mistake or on purpose) never share a token unless they hold the same key.
 */
const cacheKey = (account: FcmServiceAccount, oauthBaseUrl: string) =>
  createHash('sha256').update(`${account.client_email}\n${account.private_key}\n${oauthBaseUrl}`).digest('base64url');

async function accessTokenFor(account: FcmServiceAccount, oauthBaseUrl: string): Promise<string> {
  const key = cacheKey(account, oauthBaseUrl);
  const cached = tokens.get(key);
  if (cached && Date.now() < cached.renewAt) return cached.accessToken;
  let pending = fetching.get(key);
  if (!pending) {
    pending = fetchAccessToken(account, oauthBaseUrl)
      .then((fetched) => {
        tokens.set(key, fetched);
        return fetched;
      })
      .finally(() => fetching.delete(key));
    fetching.set(key, pending);
  }
  return (await pending).accessToken;
}

/** Drops a token FCM refused (revoked, or the clock was off), unless a newer one already replaced it. */
function forgetAccessToken(account: FcmServiceAccount, oauthBaseUrl: string, accessToken: string): void {
  const key = cacheKey(account, oauthBaseUrl);
  if (tokens.get(key)?.accessToken === accessToken) tokens.delete(key);
}

/** The OAuth 2.0 JWT bearer grant (RFC 7523) Google's service accounts use. */
async function fetchAccessToken(account: FcmServiceAccount, oauthBaseUrl: string): Promise<CachedToken> {
  const tokenUrl = `${oauthBaseUrl}/token`;
  const issuedAt = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: FCM_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(account.client_email)
    .setAudience(tokenUrl)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ASSERTION_LIFETIME_SECONDS)
    .sign(await importPKCS8(account.private_key, 'RS256'));
  const response = await send({
    target: 'provider',
    url: tokenUrl,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
  });
  const answer = parseJson(response.body) as { access_token?: unknown; expires_in?: unknown; error?: unknown } | undefined;
  if (response.status !== 200) {
    const code = typeof answer?.error === 'string' ? answer.error : `HTTP ${response.status}`;
    throw new TokenError(`the OAuth token endpoint refused the service account: ${code}`, response.status);
  }
  const expiresIn = answer?.expires_in;
  if (typeof answer?.access_token !== 'string' || typeof expiresIn !== 'number' || !(expiresIn > 0))
    throw new TokenError('the OAuth token endpoint answered without access_token and expires_in', response.status);
  return { accessToken: answer.access_token, renewAt: Date.now() + expiresIn * 1000 - TOKEN_RENEW_MARGIN_MS };
}

/** A push the network never delivered (timeout, refused connection): `failed`, for the caller to retry. */
function transportFailure(error: unknown): MobileSendResult {
  if (!(error instanceof OutboundError)) throw error;
  return { outcome: 'failed', ...(error.status ? { status: error.status } : {}), reason: `${error.code}: ${error.message}` };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');
