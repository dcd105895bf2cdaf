import * as z from '#shared/schema';

/** `minutes`: a whole number of minutes from 1 to 1440 (a day); anything else is 400. */
export const windowQuery = z.object({
  minutes: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(1440))),
});
export const DEFAULT_MINUTES = 60;

export const alertsQuery = z.object({
  limit: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(100))),
});
