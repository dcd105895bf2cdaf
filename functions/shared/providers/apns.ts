import { createHash, createPrivateKey } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { OutboundError, send } from '#shared/outbound';
import type { MobileSendResult } from '#shared/providers/fcm';

/**
 * Apple Push Notification service over its HTTP/2 provider API, authenticated with a provider
 * token (a JWT signed with the team's `.p8` key), through `#shared/outbound`'s HTTP/2 path: one
 * session per APNs host kept open and shared by the pushes, as Apple asks of providers. The base
 * URL comes from settings (`functions/wiring/bindings.ts` `outboundHosts`), so tests point it at a
 * local server speaking the same protocol (`test/support/push/apns-server.ts`).
 */

/** A token-based APNs key: the key id and team id from the developer account, and the `.p8` file's content. */
export interface ApnsCredentials {
  readonly keyId: string;
  readonly teamId: string;
  /** The `.p8` key: PEM PKCS#8, EC P-256. */
  readonly privateKey: string;
}

/**
 * Apple refuses a provider token older than an hour (`ExpiredProviderToken`) and one replaced more
 * often than every 20 minutes (`TooManyProviderTokenUpdates`): a new one every 50 minutes is in between.
 */
const PROVIDER_TOKEN_REUSE_MS = 50 * 60_000;

/**
 * Checks a `.p8` key before it is stored, so a bad setting fails when saved, not at the first push.
 * @throws Error naming what is wrong
 */
export function checkApnsKey(pem: string): void {
  // jose's importPKCS8 only reads the PKCS#8 label; a SEC1 `BEGIN EC PRIVATE KEY` would fail at signing.
  if (!pem.trimStart().startsWith('-----BEGIN PRIVATE KEY-----'))
    throw new Error('The APNs key must be the .p8 file: a PEM PKCS#8 key (-----BEGIN PRIVATE KEY-----)');
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new Error('The APNs key is not a readable PEM private key');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new Error('The APNs key must be an EC P-256 key (ES256), as Apple issues them');
}

export interface ApnsSendInput {
  /** `https://api.push.apple.com` or the sandbox. */
  readonly baseUrl: string;
  readonly credentials: ApnsCredentials;
  /** The app's bundle id: the `apns-topic`. */
  readonly bundleId: string;
  /** The device token (hex) the app registered. */
  readonly token: string;
  /** The APNs payload (`{ aps: { alert, ... }, ...custom }`), sent as JSON. */
  readonly payload: object;
  /** @default 'alert' */
  readonly pushType?: 'alert' | 'background';
  /** A PEM certificate trusted in addition to the public roots (tests: the local server's self-signed one). */
  readonly ca?: string;
  /**
   * Connecting and the whole answer; past it the stream is cancelled.
   * @default config.OUTBOUND_TIMEOUT_MS
   */
  readonly timeoutMs?: number;
}

/**
 * Sends one push. Never throws for the network or the answer: a connection or TLS failure, a
 * timeout and an APNs refusal are all a `failed` result with the reason.
 * @throws Error when `credentials.privateKey` cannot sign (a key `checkApnsKey` would have refused)
 */
export async function sendApns(input: ApnsSendInput): Promise<MobileSendResult> {
  const pushType = input.pushType ?? 'alert';
  const token = providerToken(input.credentials);
  const headers = {
    authorization: `bearer ${await token.jwt}`,
    'apns-topic': input.bundleId,
    'apns-push-type': pushType,
    // Apple requires 5 for background pushes; 10 delivers alerts at once.
    'apns-priority': pushType === 'background' ? '5' : '10',
    // One attempt, no storing: a chat notification for an offline device is stale by the time it is back.
    'apns-expiration': '0',
  };
  let answer: { status: number; body: Buffer };
  try {
    answer = await send({
      target: 'provider',
      protocol: 'http2',
      method: 'POST',
      url: new URL(`/3/device/${encodeURIComponent(input.token)}`, input.baseUrl),
      headers,
      body: JSON.stringify(input.payload),
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
      ...(input.ca === undefined ? {} : { ca: input.ca }),
    });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { outcome: 'failed', reason: error.code === 'network' ? error.message : `${error.code}: ${error.message}` };
  }

  const { status } = answer;
  if (status === 200) return { outcome: 'sent' };
  const reason = reasonOf(answer.body);
  // 410: the app was uninstalled or the token expired; BadDeviceToken: never valid for this environment.
  if (status === 410 || (status === 400 && reason === 'BadDeviceToken')) return { outcome: 'dead_token' };
  // An expired token, or one Apple refuses (a key replaced under the same id): sign a new one next time.
  if (status === 403 && (reason === 'ExpiredProviderToken' || reason === 'InvalidProviderToken'))
    forgetProviderToken(input.credentials, token);
  return { outcome: 'failed', status, reason: reason ?? `HTTP ${status}` };
}

interface CachedProviderToken {
  readonly jwt: Promise<string>;
  readonly issuedAtMs: number;
}

/**
 * Module scope so a warm instance signs once per 50 minutes per key. The promise is cached, so the
 * concurrent pushes of a cold instance share one token instead of each making its own (which
 * Apple counts as too-frequent updates).
 */
const providerTokens = new Map<string, CachedProviderToken>();

/** The whole credential, private key included: another tenant naming the same team and key id never gets this token. */
const providerTokenKey = (credentials: ApnsCredentials) =>
  createHash('sha256').update(`${credentials.teamId}\n${credentials.keyId}\n${credentials.privateKey}`).digest('base64url');

function providerToken(credentials: ApnsCredentials): CachedProviderToken {
  const key = providerTokenKey(credentials);
  const cached = providerTokens.get(key);
  if (cached && Date.now() - cached.issuedAtMs < PROVIDER_TOKEN_REUSE_MS) return cached;
  const issuedAtMs = Date.now();
  const jwt = signProviderToken(credentials, Math.floor(issuedAtMs / 1000));
  const entry = { jwt, issuedAtMs };
  providerTokens.set(key, entry);
  // A key that does not sign is not cached: the next push tries again (and rejects again).
  jwt.catch(() => forgetProviderToken(credentials, entry));
  return entry;
}

async function signProviderToken(credentials: ApnsCredentials, issuedAt: number): Promise<string> {
  const key = await importPKCS8(credentials.privateKey, 'ES256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: credentials.keyId })
    .setIssuer(credentials.teamId)
    .setIssuedAt(issuedAt)
    .sign(key);
}

/** Drops a token APNs refused, unless a newer one already replaced it. */
function forgetProviderToken(credentials: ApnsCredentials, used: CachedProviderToken): void {
  const key = providerTokenKey(credentials);
  if (providerTokens.get(key) === used) providerTokens.delete(key);
}

/** APNs answers errors as `{ "reason": "BadDeviceToken" }`. */
function reasonOf(body: Buffer): string | undefined {
  try {
    const reason = (JSON.parse(body.toString('utf8')) as { reason?: unknown }).reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}
