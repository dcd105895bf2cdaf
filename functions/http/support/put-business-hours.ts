import { setBusinessHours } from '#domain/support/business-hours';
import { httpHandler, ok } from '#edge/http';
import { businessHoursBody } from './schemas';

/** 200 with the hours as `GET /support/business-hours` answers them. */
export const handler = httpHandler('PutBusinessHours', { body: businessHoursBody }, async ({ body, caller }) =>
  ok(await setBusinessHours(caller, body)),
);
