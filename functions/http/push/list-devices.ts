import { listDevices } from '#domain/push/targets';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('ListPushDevices', {}, async ({ user }) =>
  ok({ devices: await listDevices(user.projectId, user.userId) }),
);
