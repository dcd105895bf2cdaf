import { putPushConfig } from '#domain/push/config';
import { created, httpHandler, ok } from '#edge/http';
import { putConfigBody } from './schemas';

/** Omitted fields keep their value and `null` clears one, so keys need not be sent again to flip a flag. */
export const handler = httpHandler('PutPushConfig', { body: putConfigBody }, async ({ body, caller }) => {
  const { config, created: isNew } = await putPushConfig(caller.projectId, body);
  return isNew ? created(config) : ok(config);
});
