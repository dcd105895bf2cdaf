import { deleteDevice } from '#domain/push/targets';
import { httpHandler, noContent } from '#edge/http';
import { deviceParams } from './schemas';

export const handler = httpHandler('DeletePushDevice', { params: deviceParams }, async ({ params, user }) => {
  await deleteDevice(user.projectId, user.userId, params.deviceId);
  return noContent();
});
