import { listCannedResponses } from '#domain/support/canned-responses';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('ListCannedResponses', {}, async ({ caller }) => ok(await listCannedResponses(caller.projectId)));
