import type { BridgeItem } from '#shared/db/bridge';
import { MATRIX_ORIGIN_KEY } from '#shared/providers/matrix';
import * as z from '#shared/schema';
import { openBridgeSecret } from './bridge-secrets';
import { bridgeForInbound } from './bridges';
import { bridgedUserId, postBridged } from './inbound';
import { verifyMatrixRequest } from './inbound-signatures';

/**
 * Matrix application service transactions
 * (https://spec.matrix.org/latest/application-service-api/#put_matrixappv1transactionstxnid): the
 * homeserver pushes the events of the rooms the service's namespaces cover; the text messages of
 * the bridge's Matrix room become room messages.
 */

const matrixEvent = z.object({
  type: z.string(),
  event_id: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  room_id: z.optional(z.string()),
  sender: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  content: z.optional(z.record(z.string(), z.unknown())),
});

/** A transaction; `ephemeral` and `to_device` events (typing, receipts) are not read. */
export const matrixTransaction = z.object({ events: z.array(matrixEvent).check(z.maxLength(1000)) });
export type MatrixTransaction = z.infer<typeof matrixTransaction>;

/** How each bridged message type reads in the room; `m.emote` is a `/me` action. */
const TEXT_OF: Record<string, (body: string) => string> = {
  'm.text': (body) => body,
  'm.notice': (body) => body,
  'm.emote': (body) => `* ${body}`,
};

/** The bridge `bridgeId` names, when the request carries its `hs_token`; 404 or 401 otherwise. */
export async function verifiedMatrixBridge(
  bridgeId: string,
  headers: Readonly<Record<string, string | undefined>>,
  accessToken: string | undefined,
) {
  const bridge = await bridgeForInbound('matrix', bridgeId);
  verifyMatrixRequest((await openBridgeSecret(bridge, 'hsToken')) ?? '', headers, accessToken);
  return bridge;
}

/**
 * Posts the transaction's text messages in the bridge's Matrix room to the room, in order. Events
 * the relay sent (they carry `MATRIX_ORIGIN_KEY`), edits (`m.replace`, which have no room message
 * of their own to change), other rooms' and other types are skipped. A homeserver sends a
 * transaction again until it is answered; each event is keyed by its `event_id`, so nothing is
 * posted twice. A refusal (the sender rate limit) fails the transaction and the homeserver retries it.
 */
export async function receiveMatrixTransaction(bridge: BridgeItem, transaction: MatrixTransaction, sourceIp: string): Promise<object> {
  for (const event of transaction.events) {
    const content = event.content ?? {};
    const textOf = typeof content.msgtype === 'string' ? TEXT_OF[content.msgtype] : undefined;
    const relation = content['m.relates_to'] as { rel_type?: unknown } | undefined;
    if (
      event.type !== 'm.room.message' ||
      event.room_id !== bridge.settings.matrixRoomId ||
      !event.event_id ||
      !event.sender ||
      !textOf ||
      typeof content.body !== 'string' ||
      content.body.trim() === '' ||
      MATRIX_ORIGIN_KEY in content ||
      relation?.rel_type === 'm.replace'
    ) {
      continue;
    }
    await postBridged(
      bridge,
      { eventId: event.event_id, authorId: bridgedUserId('matrix', event.sender), text: textOf(content.body) },
      sourceIp,
    );
  }
  return {};
}
