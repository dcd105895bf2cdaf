import { exchangeJson, type PlatformPostResult, trimSlash } from './chat-platform';

/**
 * Matrix's client-server API, as far as the bridges use it: an application service sending an
 * `m.room.message` with its `as_token`. The homeserver is the bridge's own (a tenant's URL), so the
 * call goes through the SSRF guard (`target: 'user'`).
 */

/** The content key the relay marks its messages with; the inbound side ignores events carrying it (no echo). */
export const MATRIX_ORIGIN_KEY = 'io.serverless-chat.origin';

/**
 * Sends `body` to `matrixRoomId`. `txnId` makes the send idempotent: a homeserver answers a repeated
 * transaction id (of the same access token) with the event it already stored, so a retried relay
 * never posts twice.
 */
export async function sendMatrixMessage(input: {
  readonly homeserverUrl: string;
  readonly asToken: string;
  readonly matrixRoomId: string;
  readonly txnId: string;
  readonly body: string;
  readonly origin: { readonly roomId: string; readonly messageId: number };
  readonly timeoutMs?: number;
}): Promise<PlatformPostResult> {
  const room = encodeURIComponent(input.matrixRoomId);
  const exchanged = await exchangeJson({
    target: 'user',
    url: `${trimSlash(input.homeserverUrl)}/_matrix/client/v3/rooms/${room}/send/m.room.message/${encodeURIComponent(input.txnId)}`,
    method: 'PUT',
    headers: { authorization: `Bearer ${input.asToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ msgtype: 'm.text', body: input.body, [MATRIX_ORIGIN_KEY]: input.origin }),
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
  });
  if ('outcome' in exchanged) return exchanged;
  const answer = exchanged.answer as { event_id?: unknown } | undefined;
  return typeof answer?.event_id === 'string'
    ? { outcome: 'sent' }
    : { outcome: 'failed', status: exchanged.response.status, reason: 'malformed answer' };
}
