/**
 * The three platforms' sides of the inbound bridge webhooks, as plain functions: Slack's request
 * signing (HMAC-SHA256), a Discord application's Ed25519 key pair and interaction signing, Matrix
 * application service transactions, and the bodies each platform sends. The e2e suite and the bench
 * sign with these; every body is returned as the exact text to send, since the signature covers bytes.
 */
import { createHmac, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

export const unixSeconds = (atMs = Date.now()) => Math.floor(atMs / 1000);

// Slack --------------------------------------------------------------------------------------------

/** `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>` under the signing secret. */
export const slackSignature = (signingSecret: string, timestamp: number | string, body: string) =>
  `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;

/** The headers Slack signs a request with; `timestamp` (Unix seconds) defaults to now. */
export function slackHeaders(signingSecret: string, body: string, timestamp: number = unixSeconds()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignature(signingSecret, timestamp, body),
  };
}

export interface SlackMessage {
  readonly teamId: string;
  readonly channelId: string;
  readonly user: string;
  readonly text: string;
  /** @default a fresh `Ev…` id */
  readonly eventId?: string;
  /** Fields added to the event (`subtype`, `bot_id`, `user_team`, ...). */
  readonly extra?: Record<string, unknown>;
}

export const slackEventId = () => `Ev${randomBytes(6).toString('hex').toUpperCase()}`;

/** An `event_callback` envelope of a channel message, as the Events API sends it (JSON text). */
export function slackMessageBody(message: SlackMessage): string {
  const eventTime = unixSeconds();
  return JSON.stringify({
    token: 'verification-token-unused',
    team_id: message.teamId,
    api_app_id: 'A0BRIDGE',
    event: {
      type: 'message',
      channel: message.channelId,
      user: message.user,
      text: message.text,
      ts: `${eventTime}.000100`,
      event_ts: `${eventTime}.000100`,
      channel_type: 'channel',
      team: message.teamId,
      ...message.extra,
    },
    type: 'event_callback',
    event_id: message.eventId ?? slackEventId(),
    event_time: eventTime,
  });
}

/** The `url_verification` handshake Slack sends when the request URL is saved. */
export const slackChallengeBody = (challenge: string) =>
  JSON.stringify({ token: 'verification-token-unused', challenge, type: 'url_verification' });

// Discord ------------------------------------------------------------------------------------------

export interface DiscordApplicationKeys {
  /** The application's public key as the developer portal shows it: 64 hex digits. */
  readonly publicKeyHex: string;
  readonly privateKey: KeyObject;
}

/** A fresh Ed25519 key pair, standing in for a Discord application's. */
export function discordKeyPair(): DiscordApplicationKeys {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  return { publicKeyHex: raw.toString('hex'), privateKey };
}

/** The headers Discord signs an interaction with: Ed25519 over the timestamp followed by the body. */
export function discordHeaders(privateKey: KeyObject, body: string, timestamp: number = unixSeconds()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-signature-timestamp': String(timestamp),
    'x-signature-ed25519': sign(null, Buffer.from(`${timestamp}${body}`), privateKey).toString('hex'),
  };
}

/** A Discord id (snowflake). */
export const snowflake = () => (BigInt(`0x${randomBytes(7).toString('hex')}`) + 100000000000000000n).toString();

export interface DiscordAuthor {
  readonly userId: string;
  /** Absent for a command used in a DM with the application. */
  readonly guildId?: string;
  readonly channelId?: string;
}

function interaction(type: number, author: DiscordAuthor, data: unknown, id: string) {
  const user = { id: author.userId, username: `user${author.userId.slice(-4)}`, discriminator: '0', global_name: null };
  return {
    id,
    application_id: '1000000000000000001',
    type,
    data,
    ...(author.guildId ? { guild_id: author.guildId, member: { user, roles: [], nick: null } } : { user }),
    channel_id: author.channelId ?? '1000000000000000002',
    token: `interaction-token-${id}`,
    version: 1,
  };
}

/** The PING Discord sends when the Interactions Endpoint URL is saved. */
export const discordPingBody = () =>
  JSON.stringify({ id: snowflake(), application_id: '1000000000000000001', type: 1, token: 'ping-token', version: 1 });

/** `/chat message:<text>` (an APPLICATION_COMMAND with one string option). */
export const discordCommandBody = (author: DiscordAuthor, text: string, id: string = snowflake()) =>
  JSON.stringify(
    interaction(2, author, { id: '1000000000000000003', name: 'chat', type: 1, options: [{ name: 'message', type: 3, value: text }] }, id),
  );

/** A MODAL_SUBMIT with one text input per value, each in its action row. */
export const discordModalBody = (author: DiscordAuthor, values: readonly string[], id: string = snowflake()) =>
  JSON.stringify(
    interaction(
      5,
      author,
      {
        custom_id: 'chat-modal',
        components: values.map((value, index) => ({ type: 1, components: [{ type: 4, custom_id: `text-${index}`, value }] })),
      },
      id,
    ),
  );

/** Any other interaction type (3 is a button press). */
export const discordInteractionBody = (type: number, author: DiscordAuthor, data: unknown = {}, id: string = snowflake()) =>
  JSON.stringify(interaction(type, author, data, id));

// Matrix -------------------------------------------------------------------------------------------

/** How a homeserver presents the registration's `hs_token`. */
export const matrixHeaders = (hsToken: string): Record<string, string> => ({
  'content-type': 'application/json',
  authorization: `Bearer ${hsToken}`,
});

export const matrixEventId = () => `$${randomBytes(16).toString('base64url')}`;
export const matrixTxnId = () => `txn-${randomBytes(6).toString('hex')}`;

export interface MatrixMessage {
  readonly roomId: string;
  readonly sender: string;
  readonly body: string;
  /** @default 'm.text' */
  readonly msgtype?: string;
  /** @default a fresh `$…` id */
  readonly eventId?: string;
  /** Fields added to the content (the relay's origin key, `m.relates_to`, ...). */
  readonly content?: Record<string, unknown>;
}

/** An `m.room.message` event as a homeserver puts it in a transaction. */
export const matrixMessageEvent = (message: MatrixMessage) => ({
  type: 'm.room.message',
  room_id: message.roomId,
  sender: message.sender,
  event_id: message.eventId ?? matrixEventId(),
  origin_server_ts: Date.now(),
  content: { msgtype: message.msgtype ?? 'm.text', body: message.body, ...message.content },
  unsigned: { age: 12 },
});

/** A transaction body: `{ events }` (JSON text). */
export const matrixTransactionBody = (events: readonly unknown[]) => JSON.stringify({ events });
