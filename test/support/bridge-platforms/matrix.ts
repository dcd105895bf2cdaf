import { type ApiRequest, type PlatformStandIn, recorded, type StandInState, startPlatformStandIn } from './stand-in';

/**
 * A local Matrix homeserver's client-server send for the bridge relay:
 * `PUT /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}` with the application service's
 * `as_token` as bearer, answered `{ event_id }`; a transaction id repeated with the same token
 * answers the event it stored the first time and stores nothing (as homeservers do); errors in
 * Matrix's shape (`M_MISSING_TOKEN`, `M_UNKNOWN_TOKEN`, `M_LIMIT_EXCEEDED` with `retry_after_ms`).
 * A bridge's `homeserverUrl` is `url`.
 */

const SEND_PATH = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/([^/]+)\/([^/]+)$/;

export function startMatrixStandIn(): Promise<PlatformStandIn> {
  const transactions = new Map<string, string>();
  let events = 0;
  return startPlatformStandIn('matrix', (request: ApiRequest, state: StandInState) => {
    const send = SEND_PATH.exec(request.pathname);
    if (!send) return { status: 404, body: { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' } };
    const roomId = decodeURIComponent(send[1] as string);
    const answer = (status: number, body: unknown, extra: { accepted?: boolean; headers?: Record<string, string> } = {}) =>
      recorded(state, request, roomId, { status, body, ...extra });
    if (request.method !== 'PUT') return answer(405, { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' });
    const token = /^Bearer (.+)$/.exec(request.authorization ?? '')?.[1];
    if (!token) return answer(401, { errcode: 'M_MISSING_TOKEN', error: 'Missing access token' });
    const expected = state.credentials.get(roomId);
    if (expected !== undefined && token !== expected)
      return answer(401, { errcode: 'M_UNKNOWN_TOKEN', error: 'Invalid access token passed.' });
    if (typeof request.body !== 'object' || request.body === null)
      return answer(400, { errcode: 'M_NOT_JSON', error: 'Content not JSON.' });

    const transaction = `${token}\n${decodeURIComponent(send[3] as string)}`;
    const stored = transactions.get(transaction);
    if (stored) return answer(200, { event_id: stored });
    const failure = state.takeFailure(roomId);
    if (failure) {
      const status = failure.status ?? 500;
      if (status === 429)
        return answer(429, { errcode: 'M_LIMIT_EXCEEDED', error: 'Too Many Requests', retry_after_ms: (failure.retryAfter ?? 1) * 1000 });
      return answer(status, { errcode: 'M_UNKNOWN', error: 'Internal server error' });
    }
    events += 1;
    const eventId = `$standin${events}:localhost`;
    transactions.set(transaction, eventId);
    return answer(200, { event_id: eventId }, { accepted: true });
  });
}
