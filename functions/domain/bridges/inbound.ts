import { createHash } from 'node:crypto';
import { type SendResult, sendMessage } from '#domain/messages/pipeline';
import type { ServicePrincipal } from '#shared/auth';
import { config } from '#shared/config';
import type { BridgeItem, BridgePlatform } from '#shared/db/bridge';
import { BRIDGE_CLIENT_MESSAGE_PREFIX } from '#shared/ids';

/** What a platform webhook carried that is to become a room message. */
export interface BridgedPost {
  /** The platform's id of the event (Slack `event_id`, Discord interaction `id`, Matrix `event_id`): the message's key. */
  readonly eventId: string;
  /** `bridgedUserId` of the platform user. */
  readonly authorId: string;
  readonly text: string;
}

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/** What the part after the platform prefix may be as it is; anything else is stood in for by its digest. */
const PLAIN_ID_PART = /^[A-Za-z0-9_.:@-]+$/;

/**
 * The user id a platform's user speaks as: `slack:<team>:<user>`, `discord:<guild or dm>:<user>`,
 * `matrix:<mxid>`. A part the room's ids cannot hold (a Matrix localpart may carry `=`, `/` or `+`;
 * 128 characters at most) becomes 32 hex of its SHA-256, still one id per platform user.
 */
export function bridgedUserId(platform: BridgePlatform, ...parts: string[]): string {
  const rest = parts.join(':');
  const id = `${platform}:${rest}`;
  return id.length <= 128 && PLAIN_ID_PART.test(rest) ? id : `${platform}:${sha256Hex(rest).slice(0, 32)}`;
}

/**
 * The message key of a platform event: the same event delivered again (Slack's retries, a Matrix
 * transaction sent again, an interaction replayed) finds its message through the pipeline's
 * `clientMessageId` reservation instead of writing a second.
 */
export const bridgeClientMessageId = (bridgeId: string, eventId: string) =>
  `${BRIDGE_CLIENT_MESSAGE_PREFIX}${sha256Hex(`${bridgeId}|${eventId}`).slice(0, 40)}`;

/**
 * Text cut to `max` UTF-16 units, its last one an ellipsis, never splitting a surrogate pair. A
 * platform allows more than a room message may hold (Slack 40,000 characters, Matrix a whole event)
 * and the webhook cannot be refused without the platform retrying it: the start of the text is
 * posted, marked as cut, rather than nothing.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** A room message's content from a platform's text (`MESSAGE_MAX_LENGTH`); `undefined` when there is nothing to say. */
export function bridgedContent(text: string): string | undefined {
  return text.trim() === '' ? undefined : cutText(text, config.MESSAGE_MAX_LENGTH);
}

/**
 * Posts a platform's message to the bridge's room through the one message pipeline, as the
 * project's service with the platform user as author: moderation, the sender rate limit (by the
 * platform user), events and realtime delivery apply as they do to any message. `undefined` when
 * the text is empty.
 */
export async function postBridged(bridge: BridgeItem, post: BridgedPost, sourceIp: string): Promise<SendResult | undefined> {
  const content = bridgedContent(post.text);
  if (content === undefined) return undefined;
  const service: ServicePrincipal = { kind: 'service', projectId: bridge.projectId };
  return sendMessage(
    service,
    {
      roomId: bridge.roomId,
      content,
      userId: post.authorId,
      clientMessageId: bridgeClientMessageId(bridge.bridgeId, post.eventId),
    },
    { source: 'bridge', viaBridge: bridge.bridgeId, sourceIp },
  );
}
