import { createHash, createHmac, createPublicKey, type KeyObject, timingSafeEqual, verify } from 'node:crypto';
import { config } from '#shared/config';
import { UnauthorizedError } from '#shared/errors';
import { signedTimestampVerdict } from '#shared/signed-timestamp';

/**
 * How each platform proves a webhook is its own, checked on the bytes as they arrived, before any of
 * them is parsed: Slack's HMAC, Discord's Ed25519 and Matrix's `hs_token`. Each check throws 401
 * `invalid_bridge_signature`; none of them reads or writes anything.
 */

type Headers = Readonly<Record<string, string | undefined>>;

export interface FreshnessOptions {
  /** @default Date.now() */
  readonly nowMs?: number;
  /** @default BRIDGE_SIGNATURE_MAX_AGE_SECONDS */
  readonly maxAgeSeconds?: number;
}

const refused = (message: string) => new UnauthorizedError('invalid_bridge_signature', message);

/** The signed timestamp, within `BRIDGE_SIGNATURE_MAX_AGE_SECONDS` of now either way (`#shared/signed-timestamp`). */
function requireFresh(timestamp: string | undefined, header: string, options: FreshnessOptions): string {
  const maxAge = options.maxAgeSeconds ?? config.BRIDGE_SIGNATURE_MAX_AGE_SECONDS;
  const verdict = signedTimestampVerdict(timestamp, maxAge, (options.nowMs ?? Date.now()) / 1000);
  if (verdict === 'malformed') throw refused(`${header} is missing or not a Unix time in seconds`);
  if (verdict === 'stale') throw refused(`${header} is more than ${maxAge} s away from now: the request is stale or replayed`);
  return timestamp as string;
}

/**
 * Slack's request signing: `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, under the app's
 * signing secret, of `v0:<X-Slack-Request-Timestamp>:<body>`.
 */
export function verifySlackRequest(signingSecret: string, headers: Headers, rawBody: Buffer, options: FreshnessOptions = {}): void {
  const timestamp = requireFresh(headers['x-slack-request-timestamp'], 'X-Slack-Request-Timestamp', options);
  const signature = /^v0=([0-9a-fA-F]{64})$/.exec(headers['x-slack-signature'] ?? '')?.[1];
  if (!signature) throw refused('X-Slack-Signature is missing or not v0= and 64 hex digits');
  const expected = createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw refused('X-Slack-Signature does not match the body');
}

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** Imported keys by their hex: a busy channel imports its application's key once per instance. */
const discordKeys = new Map<string, KeyObject>();

function discordKey(publicKeyHex: string): KeyObject {
  const known = discordKeys.get(publicKeyHex);
  if (known) return known;
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
  if (discordKeys.size >= 1000) discordKeys.clear();
  discordKeys.set(publicKeyHex, key);
  return key;
}

/**
 * Discord's interaction signing: `X-Signature-Ed25519` is the hex Ed25519 signature, by the
 * application's key, of `X-Signature-Timestamp` followed by the body.
 */
export function verifyDiscordRequest(publicKeyHex: string, headers: Headers, rawBody: Buffer, options: FreshnessOptions = {}): void {
  const timestamp = requireFresh(headers['x-signature-timestamp'], 'X-Signature-Timestamp', options);
  const signature = headers['x-signature-ed25519'];
  if (signature === undefined || !/^[0-9a-fA-F]{128}$/.test(signature)) {
    throw refused('X-Signature-Ed25519 is missing or not 128 hex digits');
  }
  let valid: boolean;
  try {
    valid = verify(null, Buffer.concat([Buffer.from(timestamp), rawBody]), discordKey(publicKeyHex), Buffer.from(signature, 'hex'));
  } catch {
    // 32 bytes that are no point of the curve: nothing can be signed by that key.
    valid = false;
  }
  if (!valid) throw refused('X-Signature-Ed25519 does not match the body');
}

const digestOf = (value: string) => createHash('sha256').update(value).digest();

/**
 * A Matrix homeserver's application service call: the `hs_token` of the registration, as
 * `Authorization: Bearer` (Matrix 1.4 on) or the `access_token` query parameter older homeservers
 * send. Compared as digests, so the time taken tells nothing of the token's length either.
 */
export function verifyMatrixRequest(hsToken: string, headers: Headers, accessToken: string | undefined): void {
  const authorization = headers.authorization;
  const given = authorization === undefined ? accessToken : /^Bearer +(\S+)$/i.exec(authorization)?.[1];
  if (!given) throw refused('The hs_token is missing: send Authorization: Bearer <hs_token>');
  if (!timingSafeEqual(digestOf(given), digestOf(hsToken))) throw refused('The hs_token is not this bridge’s');
}
