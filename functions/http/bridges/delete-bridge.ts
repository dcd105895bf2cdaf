import { deleteBridge } from '#domain/bridges/bridges';
import { httpHandler, noContent } from '#edge/http';
import { bridgeParams } from './schemas';

export const handler = httpHandler('DeleteBridge', { params: bridgeParams }, async ({ params, caller }) => {
  await deleteBridge(caller.projectId, params.bridgeId);
  return noContent();
});
