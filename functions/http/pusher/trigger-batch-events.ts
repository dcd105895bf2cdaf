import { triggerEvents, verifiedTriggerApp } from '#domain/pusher/trigger';
import { httpHandler, ok, parseRawJson } from '#edge/http';
import { appParams, batchBody, signedQuery } from './schemas';

/** Signature first (on the raw bytes), then the batch, all checked before any is sent; Pusher answers one `{}` per event. */
export const handler = httpHandler(
  'PusherTriggerBatchEvents',
  { params: appParams, query: signedQuery, rawBody: true },
  async ({ params, query, rawBody }) => {
    const path = `/apps/${params.appId}/batch_events`;
    const app = await verifiedTriggerApp({ appId: params.appId, method: 'POST', path, query, rawBody });
    const { batch } = parseRawJson(batchBody, rawBody);
    await triggerEvents(app, batch, (index) => `body.batch.${index}`);
    return ok({ batch: batch.map(() => ({})) });
  },
);
