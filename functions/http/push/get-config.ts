import { listPushConfigs } from '#domain/push/config';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetPushConfig', {}, async ({ caller }) => ok({ configs: await listPushConfigs(caller.projectId) }));
