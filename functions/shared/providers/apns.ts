import { createHash, createPrivateKey } from 'node:crypto';
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants, type OutgoingHttpHeaders } from 'node:http2';
import { rootCertificates } from 'node:tls';
import { importPKCS8, SignJWT } from 'jose';
import { config } from '#shared/config';
import type { MobileSendResult } from '#shared/providers/fcm';

/**
 * Apple Push Notification service over its HTTP/2 provider API, authenticated with a provider
 * token (a JWT signed with the team's `.p8` key). Not through `#shared/outbound`: APNs only speaks
 * HTTP/2, and Apple asks providers to keep one connection open and send many pushes on it rather
 * than connect per push. The base URL comes from settings (`functions/wiring/bindings.ts` `outboundHosts`),
 * so tests point it at a local server speaking the same protocol (`test/support/push/apns-server.ts`).
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
  const headers: OutgoingHttpHeaders = {
    ':method': 'POST',
    ':path': `/3/device/${encodeURIComponent(input.token)}`,
    authorization: `bearer ${await token.jwt}`,
    'apns-topic': input.bundleId,
    'apns-push-type': pushType,
    // Apple requires 5 for background pushes; 10 delivers alerts at once.
    'apns-priority': pushType === 'background' ? '5' : '10',
    // One attempt, no storing: a chat notification for an offline device is stale by the time it is back.
    'apns-expiration': '0',
  };
  const body = Buffer.from(JSON.stringify(input.payload), 'utf8');
  const timeoutMs = input.timeoutMs ?? config.OUTBOUND_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;

  const { session, reused } = sessionFor(input.baseUrl, input.ca);
  let outcome = await exchange(session, headers, body, timeoutMs);
  if (outcome.kind === 'unsent' && reused) {
    // A kept connection can die unseen (Apple's GOAWAY, a frozen Lambda): a push APNs did not
    // process is tried once on a new connection, as `#shared/outbound` does.
    // `close` rather than `destroy`: other pushes' streams on it end by themselves.
    session.close();
    outcome = await exchange(sessionFor(input.baseUrl, input.ca).session, headers, body, Math.max(deadline - Date.now(), 1));
  }
  if (outcome.kind !== 'answer') return { outcome: 'failed', reason: outcome.reason };

  const { status } = outcome;
  if (status === 200) return { outcome: 'sent' };
  const reason = reasonOf(outcome.body);
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

/** Module scope: one HTTP/2 connection per APNs host (and trusted certificate), kept across pushes. */
const sessions = new Map<string, ClientHttp2Session>();

function sessionFor(baseUrl: string, ca: string | undefined): { session: ClientHttp2Session; reused: boolean } {
  const key = `${baseUrl}\n${ca ?? ''}`;
  const existing = sessions.get(key);
  if (existing && !existing.closed && !existing.destroyed) return { session: existing, reused: true };
  // `ca` alone would replace the public roots; the extra certificate is trusted beside them.
  const session = connect(baseUrl, ca ? { ca: [...rootCertificates, ca] } : {});
  const evict = () => {
    if (sessions.get(key) === session) sessions.delete(key);
  };
  // Listening for 'error' is what keeps a failed connection from crashing the process; its streams
  // are destroyed with the error and report it themselves.
  session.on('error', evict);
  // After a GOAWAY the connection takes no new streams; the ones under way finish on it.
  session.on('goaway', evict);
  session.on('close', evict);
  // An idle connection must not keep a process alive; a push under way holds its own timer.
  session.unref();
  sessions.set(key, session);
  return { session, reused: false };
}

type Exchange =
  | { readonly kind: 'answer'; readonly status: number; readonly body: Buffer }
  /** Failed in a way that shows APNs did not process the push: safe to send again. */
  | { readonly kind: 'unsent'; readonly reason: string }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * Failures that mean the push was never processed: the connection was closing or closed when the
 * stream was opened, the stream was still waiting for the connection, or the kept connection
 * turned out dead when written to. A stream APNs refused (`REFUSED_STREAM`, what streams past a
 * GOAWAY get) is unprocessed by definition (RFC 9113 §8.7).
 */
const UNSENT_CODES = new Set([
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_HTTP2_STREAM_CANCEL',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
]);

/** One request on one stream; settles by `timeoutMs` at the latest, cancelling the stream. */
function exchange(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body: Buffer, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    let settled = false;
    let stream: ClientHttp2Stream | undefined;
    let status: number | undefined;
    const finish = (outcome: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      finish({ kind: 'failed', reason: `timeout: no answer within ${timeoutMs} ms` });
      stream?.close(constants.NGHTTP2_CANCEL);
    }, timeoutMs);
    const broken = (error: unknown) => {
      const reason = describe(error);
      const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
      const unsent = status === undefined && (stream?.rstCode === constants.NGHTTP2_REFUSED_STREAM || UNSENT_CODES.has(code));
      finish({ kind: unsent ? 'unsent' : 'failed', reason });
    };

    try {
      stream = session.request(headers);
    } catch (error) {
      // The session closed or got a GOAWAY between the lookup and now.
      return broken(error);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('response', (answer) => {
      status = Number(answer[':status']);
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > config.OUTBOUND_MAX_RESPONSE_BYTES) {
        finish({ kind: 'failed', reason: `response_too_large: the answer is larger than ${config.OUTBOUND_MAX_RESPONSE_BYTES} bytes` });
        stream?.close(constants.NGHTTP2_CANCEL);
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => {
      if (status === undefined) return broken(new Error('the stream ended without an answer'));
      finish({ kind: 'answer', status, body: Buffer.concat(chunks, size) });
    });
    stream.on('error', broken);
    stream.on('close', () => broken(new Error(`the stream closed before the answer was complete (code ${stream?.rstCode})`)));
    stream.end(body);
  });
}

/**
 * The failure a stream reports. Streams still waiting for the connection are cancelled with
 * `ERR_HTTP2_STREAM_CANCEL` whose cause is the connection's error (a TLS refusal, say): the cause
 * is the useful part.
 */
function describe(error: unknown): string {
  const actual = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (!(actual instanceof Error)) return String(actual);
  const code = (actual as NodeJS.ErrnoException).code;
  return code ? `${code}: ${actual.message}` : actual.message;
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
