import { unsubscribeDigestEmail } from '#domain/digest/unsubscribe-link';
import { httpHandler, ok } from '#edge/http';
import { unsubscribeQuery } from './schemas';

export const handler = httpHandler('UnsubscribeDigestEmail', { query: unsubscribeQuery }, async ({ query }) =>
  ok(await unsubscribeDigestEmail(query.token)),
);
