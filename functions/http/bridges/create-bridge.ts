import { createBridge } from '#domain/bridges/registrations';
import { created, httpHandler } from '#edge/http';
import { actorId } from '#shared/auth';
import { createBridgeBody } from './schemas';

/** 201 with the bridge: its settings, the names of its secrets and the path its platform calls. */
export const handler = httpHandler('CreateBridge', { body: createBridgeBody }, async ({ body, caller }) =>
  created(await createBridge(caller.projectId, body, actorId(caller))),
);
