import { type ApiRequest, type PlatformStandIn, recorded, type StandInState, startPlatformStandIn } from './stand-in';

/**
 * A local Discord HTTP API (v10) for the bridge relay: webhook execute
 * (`POST /api/v10/webhooks/{id}/{token}`, `?wait=true` answering the message, else 204) and a bot's
 * post (`POST /api/v10/channels/{id}/messages` with `Authorization: Bot <token>`), answered with
 * Discord's message objects and error bodies (`{ message, code }`: 401 for a wrong token, 400
 * `Invalid Form Body` for an empty or over-long content or a username Discord refuses, 429 with
 * `retry_after` and `Retry-After` when told to). Point `DISCORD_API_BASE_URL` at `url` + `/api/v10`.
 */

const WEBHOOK_PATH = /^\/api\/v10\/webhooks\/(\d+)\/([^/]+)$/;
const CHANNEL_PATH = /^\/api\/v10\/channels\/(\d+)\/messages$/;

export const DISCORD_API_PATH = '/api/v10';

export function startDiscordStandIn(): Promise<PlatformStandIn> {
  let snowflake = 1_000_000_000_000_000_000n;
  return startPlatformStandIn('discord', (request: ApiRequest, state: StandInState) => {
    const webhook = WEBHOOK_PATH.exec(request.pathname);
    const channel = CHANNEL_PATH.exec(request.pathname);
    if (!webhook && !channel) return { status: 404, body: { message: '404: Not Found', code: 0 } };
    const target = (webhook?.[1] ?? channel?.[1]) as string;
    const answer = (status: number, body: unknown, extra: { accepted?: boolean; headers?: Record<string, string> } = {}) =>
      recorded(state, request, target, { status, body, ...extra });
    if (request.method !== 'POST') return answer(405, { message: '405: Method Not Allowed', code: 0 });

    const expected = state.credentials.get(target);
    if (webhook) {
      const token = decodeURIComponent(webhook[2] as string);
      if (expected !== undefined && token !== expected) return answer(401, { message: 'Invalid Webhook Token', code: 50027 });
    } else {
      const token = /^Bot (.+)$/.exec(request.authorization ?? '')?.[1];
      if (!token || (expected !== undefined && token !== expected)) return answer(401, { message: '401: Unauthorized', code: 0 });
    }

    const content = request.body?.content;
    if (typeof content !== 'string' || content === '') return answer(400, { message: 'Cannot send an empty message', code: 50006 });
    const formErrors: Record<string, unknown> = {};
    if (Array.from(content).length > 2000)
      formErrors.content = { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] };
    const username = request.body?.username;
    if (
      username !== undefined &&
      (typeof username !== 'string' || /discord|clyde/i.test(username) || username.length < 1 || username.length > 80)
    ) {
      formErrors.username = { _errors: [{ code: 'USERNAME_INVALID', message: 'Username cannot contain "discord" or "clyde"' }] };
    }
    if (Object.keys(formErrors).length > 0) return answer(400, { message: 'Invalid Form Body', code: 50035, errors: formErrors });

    const failure = state.takeFailure(target);
    if (failure) {
      const status = failure.status ?? 500;
      if (status === 429) {
        const retryAfter = failure.retryAfter ?? 1;
        return answer(
          429,
          { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
          { headers: { 'retry-after': String(retryAfter) } },
        );
      }
      return answer(status, { message: status >= 500 ? 'Internal Server Error' : `${status}`, code: 0 });
    }
    snowflake += 1n;
    const message = {
      id: String(snowflake),
      type: 0,
      channel_id: channel ? target : '900000000000000001',
      content,
      timestamp: new Date(request.receivedAt).toISOString(),
      author: { id: webhook ? target : '800000000000000001', username: webhook ? (username ?? 'Webhook') : 'bridge-bot', bot: true },
      ...(webhook ? { webhook_id: target } : {}),
    };
    if (webhook && request.search.get('wait') !== 'true') return answer(204, undefined, { accepted: true });
    return answer(200, message, { accepted: true });
  });
}
