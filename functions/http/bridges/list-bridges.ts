import { listBridges } from '#domain/bridges/bridges';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('ListBridges', {}, async ({ caller }) => ok({ bridges: await listBridges(caller.projectId) }));
