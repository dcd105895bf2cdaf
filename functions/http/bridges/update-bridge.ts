import { updateBridge } from '#domain/bridges/registrations';
import { httpHandler, ok } from '#edge/http';
import { bridgeParams, updateBridgeBody } from './schemas';

export const handler = httpHandler('UpdateBridge', { params: bridgeParams, body: updateBridgeBody }, async ({ params, body, caller }) =>
  ok(await updateBridge(caller.projectId, params.bridgeId, body)),
);
