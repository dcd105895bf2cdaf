import { createOrRotatePusherApp } from '#domain/pusher/apps';
import { created, httpHandler } from '#edge/http';

/** 201 with the app id, the new key and the new secret: the one answer that shows the secret. */
export const handler = httpHandler('PutPusherApp', {}, async ({ caller }) => {
  const { appId, key, secret } = await createOrRotatePusherApp(caller.projectId);
  return created({ appId, key, secret });
});
