import { exchangeJson, type PlatformPostResult, trimSlash } from './chat-platform';

/**
 * Discord's HTTP API, as far as the bridges use it: executing a webhook, or a bot's post to a
 * channel. The base URL comes from a setting (`DISCORD_API_BASE_URL`, `outbound:discord`, with the
 * API version: `https://discord.com/api/v10`), so tests point it at a local server speaking the
 * same API (`test/support/bridge-platforms/discord.ts`).
 */

/** Discord refuses longer message content with a 400. */
export const DISCORD_MAX_CONTENT = 2000;
/** And webhook usernames outside 1 to 80 characters. */
const DISCORD_MAX_USERNAME = 80;

/**
 * No mention in relayed text pings anyone: `@everyone`, `@here`, roles and users stay text
 * (Discord's `allowed_mentions` with an empty `parse`).
 */
export const DISCORD_NO_MENTIONS = { parse: [] } as const;

/**
 * Content Discord accepts: at most {@link DISCORD_MAX_CONTENT} characters (by code points, so no
 * half pair is sent), for the relay's posts and the interaction answers alike.
 */
export function fitDiscordContent(content: string): string {
  const characters = Array.from(content);
  return characters.length <= DISCORD_MAX_CONTENT ? content : `${characters.slice(0, DISCORD_MAX_CONTENT - 1).join('')}…`;
}

/**
 * A webhook username Discord accepts: it refuses names containing `discord` or `clyde` (any case),
 * which a relayed Discord user's id (`discord:<guild>:<user>`) does, and names outside 1 to 80
 * characters.
 */
export function discordUsername(name: string): string {
  const cleaned = name
    .replace(/discord/gi, 'dc')
    .replace(/clyde/gi, 'cl')
    .trim();
  return Array.from(cleaned || 'chat')
    .slice(0, DISCORD_MAX_USERNAME)
    .join('');
}

/** Runs the webhook `webhookId` with its token as `username`, waiting for Discord to store the message (`?wait=true`). */
export async function executeDiscordWebhook(input: {
  readonly baseUrl: string;
  readonly webhookId: string;
  readonly webhookToken: string;
  readonly username: string;
  readonly content: string;
  readonly timeoutMs?: number;
}): Promise<PlatformPostResult> {
  const exchanged = await exchangeJson({
    target: 'provider',
    url: `${trimSlash(input.baseUrl)}/webhooks/${encodeURIComponent(input.webhookId)}/${encodeURIComponent(input.webhookToken)}?wait=true`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      content: fitDiscordContent(input.content),
      username: discordUsername(input.username),
      allowed_mentions: DISCORD_NO_MENTIONS,
    }),
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
  });
  return 'outcome' in exchanged ? exchanged : { outcome: 'sent' };
}

/** Posts `content` to `channelId` as the bot (a bot shows its own name: the author goes in the content). */
export async function postDiscordChannelMessage(input: {
  readonly baseUrl: string;
  readonly botToken: string;
  readonly channelId: string;
  readonly content: string;
  readonly timeoutMs?: number;
}): Promise<PlatformPostResult> {
  const exchanged = await exchangeJson({
    target: 'provider',
    url: `${trimSlash(input.baseUrl)}/channels/${encodeURIComponent(input.channelId)}/messages`,
    method: 'POST',
    headers: { authorization: `Bot ${input.botToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: fitDiscordContent(input.content), allowed_mentions: DISCORD_NO_MENTIONS }),
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
  });
  return 'outcome' in exchanged ? exchanged : { outcome: 'sent' };
}
