import { getBridge } from '#domain/bridges/bridges';
import { httpHandler, ok } from '#edge/http';
import { bridgeParams } from './schemas';

export const handler = httpHandler('GetBridge', { params: bridgeParams }, async ({ params, caller }) =>
  ok(await getBridge(caller.projectId, params.bridgeId)),
);
