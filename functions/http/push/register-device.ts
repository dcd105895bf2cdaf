import { registerDevice } from '#domain/push/targets';
import { created, httpHandler, ok } from '#edge/http';
import { registerDeviceBody } from './schemas';

/** 201 for a new device, 200 when the token was already the caller's (its row is updated, never doubled). */
export const handler = httpHandler('RegisterPushDevice', { body: registerDeviceBody }, async ({ body, user }) => {
  const { device, created: isNew } = await registerDevice(user.projectId, user.userId, body);
  return isNew ? created(device) : ok(device);
});
