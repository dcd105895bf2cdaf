import { createHash } from 'node:crypto';
import { openBridgeSecret } from '#domain/bridges/bridge-secrets';
import { bridgesOfRoom } from '#domain/bridges/bridges';
import { onceFor } from '#domain/events/once';
import { bound } from '#shared/bindings';
import type { BridgeItem } from '#shared/db/bridge';
import type { DomainEvent, EventPayload } from '#shared/events';
import { logger } from '#shared/logger';
import type { PlatformPostResult } from '#shared/providers/chat-platform';
import { executeDiscordWebhook, postDiscordChannelMessage } from '#shared/providers/discord';
import { sendMatrixMessage } from '#shared/providers/matrix';
import { escapeSlackText, postSlackMessage } from '#shared/providers/slack';

/**
 * The outbound relay: a new message of a bridged room goes to the channel of each of the room's
 * bridges, except the bridge it came in through (no echo). Runs off the sender's path, as the
 * `BridgeRelay` subscriber of `message.created` (its filter policy lets only bridged rooms' events
 * through). Each (event, bridge) is claimed once (`onceFor` with the bridge as its part): when one
 * platform fails, the event fails and SQS delivers it again, and the retry sends to that bridge
 * only; after `maxReceiveCount` receives it rests in the subscriber's dead-letter queue.
 */

type Message = EventPayload<'message.created'>;

/** A message stored this long before it was announced was imported or backdated: history, not news for the channel. */
const BACKDATED_AFTER_MS = 10 * 60 * 1000;

/** The subscriber id in `functions/wiring/bridges.ts`, whose timeout is the claims' lease. */
const SUBSCRIBER = 'BridgeRelay';

export interface RelayResult {
  /** Bridges the message was sent to by this call. */
  readonly sent: readonly string[];
  /** Bridges skipped because an earlier delivery of the event already sent to them. */
  readonly alreadySent: readonly string[];
}

/** One or more bridges' platforms failed; the event is retried (those bridges only). */
export class BridgeRelayError extends Error {
  override readonly name = 'BridgeRelayError';
  constructor(readonly failures: readonly { readonly bridgeId: string; readonly platform: string; readonly reason: string }[]) {
    super(`Relay failed for ${failures.map((failure) => `${failure.bridgeId} (${failure.platform}: ${failure.reason})`).join(', ')}`);
  }
}

export async function relayMessage(event: DomainEvent<'message.created'>): Promise<RelayResult> {
  const { projectId, payload: message } = event;
  if (!message.bridged) return { sent: [], alreadySent: [] };
  if (Date.parse(event.createdAt) - Date.parse(message.createdAt) > BACKDATED_AFTER_MS) return { sent: [], alreadySent: [] };
  // Read now, not taken from the event: a bridge deleted since the message was sent gets nothing.
  const targets = (await bridgesOfRoom(projectId, message.roomId)).filter((bridge) => bridge.bridgeId !== message.viaBridge);
  const outcomes = await Promise.allSettled(
    targets.map((bridge) => onceFor(SUBSCRIBER, event, () => postTo(bridge, message), { part: bridge.bridgeId })),
  );
  const sent: string[] = [];
  const alreadySent: string[] = [];
  const failures: { bridgeId: string; platform: string; reason: string }[] = [];
  outcomes.forEach((outcome, index) => {
    const bridge = targets[index] as BridgeItem;
    if (outcome.status === 'rejected') {
      const reason = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
      failures.push({ bridgeId: bridge.bridgeId, platform: bridge.platform, reason });
    } else (outcome.value ? sent : alreadySent).push(bridge.bridgeId);
  });
  if (failures.length > 0) throw new BridgeRelayError(failures);
  return { sent, alreadySent };
}

/** A platform's refusal, thrown so the claim on this bridge is released for the retry. */
class PlatformRefusal extends Error {
  constructor(result: Extract<PlatformPostResult, { outcome: 'failed' }>) {
    super(`${result.reason}${result.retryAfterSeconds === undefined ? '' : ` (retry after ${result.retryAfterSeconds} s)`}`);
  }
}

async function postTo(bridge: BridgeItem, message: Message): Promise<void> {
  const result = await postByPlatform(bridge, message);
  if (result.outcome === 'failed') {
    logger.warn('a bridge platform refused a relayed message', {
      bridgeId: bridge.bridgeId,
      platform: bridge.platform,
      status: result.status,
      reason: result.reason,
    });
    throw new PlatformRefusal(result);
  }
}

/** The message's text and its attachments' URLs, one a line (no platform needs an upload of its own). */
const textOf = (message: Message) => [message.content, ...message.attachments].filter((part) => part !== '').join('\n');

/** A setting or secret `requireComplete` of the registrations made sure of; missing means a broken record. */
function required<T>(value: T | undefined, bridge: BridgeItem, field: string): T {
  if (value === undefined) throw new Error(`Bridge ${bridge.bridgeId} has no ${field}`);
  return value;
}

async function postByPlatform(bridge: BridgeItem, message: Message): Promise<PlatformPostResult> {
  const { settings } = bridge;
  if (bridge.platform === 'slack') {
    return postSlackMessage({
      baseUrl: bound('outbound:slack'),
      botToken: required(await openBridgeSecret(bridge, 'botToken'), bridge, 'botToken'),
      channel: required(settings.channelId, bridge, 'channelId'),
      // A bot token posts under the app's name; the author leads the text (`username` would need chat:write.customize).
      text: `*${escapeSlackText(message.userId)}*: ${escapeSlackText(textOf(message))}`,
    });
  }
  if (bridge.platform === 'discord') {
    const baseUrl = bound('outbound:discord');
    const webhookToken = settings.webhookId ? await openBridgeSecret(bridge, 'webhookToken') : undefined;
    // A webhook shows the author as the post's name; a bot posts under its own, so the author leads the content.
    if (settings.webhookId && webhookToken) {
      return executeDiscordWebhook({
        baseUrl,
        webhookId: settings.webhookId,
        webhookToken,
        username: message.userId,
        content: textOf(message),
      });
    }
    return postDiscordChannelMessage({
      baseUrl,
      botToken: required(await openBridgeSecret(bridge, 'botToken'), bridge, 'botToken'),
      channelId: required(settings.channelId, bridge, 'channelId'),
      content: `**${message.userId}**: ${textOf(message)}`,
    });
  }
  return sendMatrixMessage({
    homeserverUrl: required(settings.homeserverUrl, bridge, 'homeserverUrl'),
    asToken: required(await openBridgeSecret(bridge, 'asToken'), bridge, 'asToken'),
    matrixRoomId: required(settings.matrixRoomId, bridge, 'matrixRoomId'),
    txnId: matrixTxnId(bridge, message),
    body: `${message.userId}: ${textOf(message)}`,
    origin: { roomId: message.roomId, messageId: message.messageId },
  });
}

/** The same message to the same bridge is always the same transaction: the homeserver stores a retry once. */
export const matrixTxnId = (bridge: Pick<BridgeItem, 'bridgeId'>, message: Pick<Message, 'roomId' | 'messageId'>) =>
  `sc${createHash('sha256').update(`${bridge.bridgeId}|${message.roomId}|${message.messageId}`).digest('hex').slice(0, 40)}`;
