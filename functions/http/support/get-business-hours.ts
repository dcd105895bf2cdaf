import { getBusinessHours } from '#domain/support/business-hours';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetBusinessHours', {}, async ({ caller }) => ok(await getBusinessHours(caller.projectId)));
