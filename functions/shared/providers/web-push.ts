// @ts-expect-error web-push 3.6 ships no type declarations; `WebPushLibrary` below types the part this module uses.
import webPushLibrary from 'web-push';
import { send } from '#shared/outbound';

/**
 * Web Push (RFC 8030) to a browser's push service: the payload encrypted for the subscription
 * (RFC 8291, `aes128gcm` of RFC 8188) and the request signed with the service's VAPID key (RFC 8292),
 * both done by the `web-push` library, then sent through the one outbound client with the SSRF
 * guard, because the endpoint is whatever URL the browser handed the user.
 */

/** A browser's `PushSubscription` as the client registers it: the endpoint and its encryption keys (base64url). */
export interface WebPushTarget {
  readonly endpoint: string;
  readonly keys: { readonly p256dh: string; readonly auth: string };
}

/**
 * The service's VAPID identity. The keys are base64url raw P-256 keys as `web-push` makes them: the
 * 65-byte uncompressed public point (the browser's `applicationServerKey`) and the 32-byte private scalar.
 */
export interface VapidKeys {
  /** A `mailto:` or `https:` URL where the push service's operator can reach ours. */
  readonly subject: string;
  readonly publicKey: string;
  readonly privateKey: string;
}

/** One encrypted, signed push request, ready for the wire. */
export interface WebPushRequest {
  readonly endpoint: string;
  /** Lowercase names; `content-length` is left to the outbound client. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

interface WebPushLibrary {
  generateVAPIDKeys(): { publicKey: string; privateKey: string };
  generateRequestDetails(
    subscription: WebPushTarget,
    payload: Buffer,
    options: {
      contentEncoding: 'aes128gcm';
      TTL: number;
      urgency: 'normal';
      vapidDetails: VapidKeys;
    },
  ): { endpoint: string; headers: Record<string, string | number>; body: Buffer | null };
}

const webPush = webPushLibrary as WebPushLibrary;

/**
 * Seconds the push service keeps a message for a device that is offline. Chat notifications are
 * worth little after a minute: the messages are in the room's history when the user comes back.
 */
const TTL_SECONDS = 60;

/** Makes a VAPID key pair for a project (`web-push`'s `generateVAPIDKeys`). */
export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  return webPush.generateVAPIDKeys();
}

/**
 * Encrypts `payload` for the subscription and signs a new VAPID JWT for the endpoint's origin: the
 * CPU part of a web push, without the network.
 *
 * `web-push` 3.6.7 (`src/vapid-helper.js`, `src/encryption-helper.js`, `http_ece` 1.2) fixes what
 * the protocol needs and this module relies on: a JWT `{ aud: <endpoint origin>, exp: now + 12 h,
 * sub }` signed ES256 on every call (`generateRequestDetails` takes no expiration; 12 h is its
 * default and within the 24 h RFC 8292 allows), a 16-byte random salt and a new ephemeral ECDH
 * key per message, record size 4096 and the 0x02 delimiter of the last record.
 * @throws Error when the subscription keys or the VAPID keys are malformed (`web-push`'s message)
 */
export function encryptWebPush(target: WebPushTarget, payload: string, vapid: VapidKeys): WebPushRequest {
  // A Buffer, even an empty one, is always encrypted; `web-push` would send an empty string unencrypted.
  const details = webPush.generateRequestDetails(target, Buffer.from(payload, 'utf8'), {
    contentEncoding: 'aes128gcm',
    TTL: TTL_SECONDS,
    urgency: 'normal',
    vapidDetails: vapid,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) headers[name.toLowerCase()] = String(value);
  delete headers['content-length'];
  return {
    endpoint: details.endpoint,
    headers: {
      ...headers,
      // `web-push` sets these today; stated here because the push services refuse a request without them.
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
      ttl: String(TTL_SECONDS),
      urgency: 'normal',
    },
    body: details.body ?? Buffer.alloc(0),
  };
}

/**
 * Sends one web push. The status is the push service's answer, for the caller to act on: 201 sent,
 * 404 and 410 the subscription is gone, 429 slow down (`Retry-After`), 413 payload too large, and
 * 400, 401 and 403 for a request the service refused (bad VAPID JWT or a key the subscription was not made for).
 * @param options.allowPrivate the SSRF guard's `allowPrivate` (the local runtime and tests reach loopback push services)
 * @param options.timeoutMs connecting and the whole answer (default `OUTBOUND_TIMEOUT_MS`)
 * @throws OutboundError on a refused endpoint (`private_address`, `invalid_request`), `timeout` or `network`
 * @throws Error when the subscription or the VAPID keys are malformed
 */
export async function sendWebPush(
  target: WebPushTarget,
  payload: string,
  vapid: VapidKeys,
  options: { allowPrivate?: boolean; timeoutMs?: number } = {},
): Promise<{ status: number }> {
  const request = encryptWebPush(target, payload, vapid);
  const response = await send(
    {
      target: 'user',
      url: request.endpoint,
      method: 'POST',
      headers: request.headers,
      body: request.body,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    },
    options.allowPrivate === undefined ? {} : { allowPrivate: options.allowPrivate },
  );
  return { status: response.status };
}
