import type { BridgeItem } from '#shared/db/bridge';
import * as z from '#shared/schema';
import { openBridgeSecret } from './bridge-secrets';
import { bridgeForInbound } from './bridges';
import { bridgedUserId, postBridged } from './inbound';
import { verifySlackRequest } from './inbound-signatures';

/**
 * Slack's Events API (https://api.slack.com/apis/events-api): the `url_verification` handshake and
 * `event_callback` envelopes, of which channel messages people typed become room messages.
 */

const slackId = z.string().check(z.minLength(1), z.maxLength(64));

const slackEvent = z.object({
  type: z.string(),
  subtype: z.optional(z.string()),
  channel: z.optional(z.string()),
  user: z.optional(z.string()),
  text: z.optional(z.string()),
  bot_id: z.optional(z.nullable(z.string())),
  /** The author's own workspace, which differs from the envelope's in a channel shared between workspaces. */
  user_team: z.optional(slackId),
  team: z.optional(slackId),
});

const HANDLED_TYPES = ['url_verification', 'event_callback'];

/** The envelopes Slack sends; other types (`app_rate_limited`, ...) are acknowledged and ignored. */
export const slackEnvelope = z.union([
  z.object({ type: z.literal('url_verification'), challenge: z.string().check(z.minLength(1), z.maxLength(1024)) }),
  z.object({
    type: z.literal('event_callback'),
    event_id: z.string().check(z.minLength(1), z.maxLength(256)),
    team_id: slackId,
    event: slackEvent,
  }),
  z.object({ type: z.string().check(z.refine((type) => !HANDLED_TYPES.includes(type), 'must be a Slack event envelope type')) }),
]);
export type SlackEnvelope = z.infer<typeof slackEnvelope>;

/**
 * Message subtypes that are a person's own text: a reply also sent to the channel, a `/me`
 * message, text posted with a file (the file is not bridged). Edits, deletions, joins and bots'
 * posts are not.
 */
const USER_TEXT_SUBTYPES: ReadonlySet<string | undefined> = new Set([undefined, 'thread_broadcast', 'me_message', 'file_share']);

/** Slack escapes these three in message text (https://api.slack.com/reference/surfaces/formatting#escaping). */
const unescapeSlack = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The bridge `bridgeId` names, when the request carries its Slack signature; 404 or 401 otherwise. */
export async function verifiedSlackBridge(bridgeId: string, headers: Readonly<Record<string, string | undefined>>, rawBody: Buffer) {
  const bridge = await bridgeForInbound('slack', bridgeId);
  verifySlackRequest((await openBridgeSecret(bridge, 'signingSecret')) ?? '', headers, rawBody);
  return bridge;
}

/**
 * Answers Slack's handshake, and posts a person's message in the bridge's channel (and workspace,
 * when the bridge names one) to the room. Everything else is acknowledged so Slack does not retry it.
 */
export async function receiveSlackEvent(
  bridge: BridgeItem,
  envelope: SlackEnvelope,
  sourceIp: string,
): Promise<{ challenge: string } | { ok: true }> {
  if (envelope.type === 'url_verification' && 'challenge' in envelope) return { challenge: envelope.challenge };
  if (envelope.type !== 'event_callback' || !('event' in envelope)) return { ok: true };
  const { event } = envelope;
  const fromPerson = event.type === 'message' && USER_TEXT_SUBTYPES.has(event.subtype) && !event.bot_id && event.user;
  const here =
    event.channel === bridge.settings.channelId && (bridge.settings.teamId === undefined || envelope.team_id === bridge.settings.teamId);
  if (!fromPerson || !here || !event.user || event.text === undefined) return { ok: true };
  await postBridged(
    bridge,
    {
      eventId: envelope.event_id,
      authorId: bridgedUserId('slack', event.user_team ?? event.team ?? envelope.team_id, event.user),
      text: unescapeSlack(event.text),
    },
    sourceIp,
  );
  return { ok: true };
}
