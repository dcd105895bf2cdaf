import { exchangeJson, type PlatformPostResult, trimSlash } from './chat-platform';

/**
 * Slack's Web API, as far as the bridges use it: `chat.postMessage` with the bridge's bot token.
 * The base URL comes from a setting (`SLACK_API_BASE_URL`, `outbound:slack`), so tests point it at
 * a local server speaking the same API (`test/support/bridge-platforms/slack.ts`).
 */

/**
 * Slack reads `&`, `<` and `>` as markup (`<!channel>` pings a whole channel, `<@U123>` a person):
 * Slack's formatting guide asks callers to escape exactly these three in text they did not write.
 */
export const escapeSlackText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Posts `text` to `channel`. Slack answers HTTP 200 with `{ ok: false, error }` for most refusals
 * (a revoked token, a channel the bot left): those are failures too, as is a 429 (with its
 * `Retry-After`).
 */
export async function postSlackMessage(input: {
  readonly baseUrl: string;
  readonly botToken: string;
  readonly channel: string;
  /** Slack mrkdwn, already escaped where it came from others ({@link escapeSlackText}). */
  readonly text: string;
  /** Connecting and the whole answer. @default config.OUTBOUND_TIMEOUT_MS */
  readonly timeoutMs?: number;
}): Promise<PlatformPostResult> {
  const exchanged = await exchangeJson({
    target: 'provider',
    url: `${trimSlash(input.baseUrl)}/api/chat.postMessage`,
    method: 'POST',
    headers: { authorization: `Bearer ${input.botToken}`, 'content-type': 'application/json; charset=utf-8' },
    // Links are not unfurled: a relayed message shows as it was written, not with previews Slack fetched.
    body: JSON.stringify({ channel: input.channel, text: input.text, unfurl_links: false, unfurl_media: false }),
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
  });
  if ('outcome' in exchanged) return exchanged;
  const answer = exchanged.answer as { ok?: unknown; error?: unknown } | undefined;
  if (answer?.ok === true) return { outcome: 'sent' };
  const reason = typeof answer?.error === 'string' ? answer.error : 'malformed answer';
  return { outcome: 'failed', status: exchanged.response.status, reason };
}
