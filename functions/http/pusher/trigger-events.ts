import { triggerEvents, verifiedTriggerApp } from '#domain/pusher/trigger';
import { httpHandler, ok, parseRawJson } from '#edge/http';
import { appParams, signedQuery, triggerBody } from './schemas';

/** Signature first (on the raw bytes), then the event; Pusher answers `{}`. */
export const handler = httpHandler(
  'PusherTriggerEvents',
  { params: appParams, query: signedQuery, rawBody: true },
  async ({ params, query, rawBody }) => {
    const path = `/apps/${params.appId}/events`;
    const app = await verifiedTriggerApp({ appId: params.appId, method: 'POST', path, query, rawBody });
    await triggerEvents(app, [parseRawJson(triggerBody, rawBody)], () => 'body');
    return ok({});
  },
);
