import { type ApiRequest, type PlatformStandIn, recorded, type StandInState, startPlatformStandIn } from './stand-in';

/**
 * A local Slack Web API for the bridge relay: `POST /api/chat.postMessage` with a bot token
 * (`Authorization: Bearer xoxb-…`), answered as Slack answers, HTTP 200 with `{ ok: true, ts, … }`
 * or `{ ok: false, error }` (`not_authed`, `invalid_auth` for a token the channel does not expect,
 * `channel_not_found`, `no_text`), and 429 `ratelimited` with `Retry-After` when told to.
 * Point `SLACK_API_BASE_URL` at `url`.
 */
export function startSlackStandIn(): Promise<PlatformStandIn> {
  let sequence = 0;
  return startPlatformStandIn('slack', (request: ApiRequest, state: StandInState) => {
    if (request.pathname !== '/api/chat.postMessage') return { status: 404, body: { ok: false, error: 'unknown_method' } };
    const channel = typeof request.body?.channel === 'string' ? request.body.channel : '';
    const answer = (body: Record<string, unknown>, status = 200, extra: { accepted?: boolean; headers?: Record<string, string> } = {}) =>
      recorded(state, request, channel, { status, body, ...extra });
    if (request.method !== 'POST') return answer({ ok: false, error: 'method_not_supported_for_channel_type' }, 405);
    const token = /^Bearer (.+)$/.exec(request.authorization ?? '')?.[1];
    if (!token) return answer({ ok: false, error: 'not_authed' });
    const expected = state.credentials.get(channel);
    if (expected === undefined ? !token.startsWith('xox') : token !== expected) return answer({ ok: false, error: 'invalid_auth' });
    if (!channel) return answer({ ok: false, error: 'channel_not_found' });
    if (typeof request.body?.text !== 'string' || request.body.text === '') return answer({ ok: false, error: 'no_text' });
    const failure = state.takeFailure(channel);
    if (failure) {
      const status = failure.status ?? 200;
      const headers: Record<string, string> = failure.retryAfter === undefined ? {} : { 'retry-after': String(failure.retryAfter) };
      const error = failure.error ?? (status === 429 ? 'ratelimited' : status === 200 ? 'fatal_error' : 'internal_error');
      return answer({ ok: false, error }, status, { headers });
    }
    sequence += 1;
    const ts = `${Math.floor(request.receivedAt / 1000)}.${String(sequence).padStart(6, '0')}`;
    return answer(
      { ok: true, channel, ts, message: { type: 'message', subtype: 'bot_message', text: request.body.text, ts, bot_id: 'BSTANDIN' } },
      200,
      { accepted: true },
    );
  });
}
