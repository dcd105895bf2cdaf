import * as z from '#shared/schema';

/** `minutes`: a whole number of minutes from 1 to 1440 (a day); anything else is 400. */
export const windowQuery = z.object({
  minutes: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(1440))),
});
export const DEFAULT_MINUTES = 60;

export const alertsQuery = z.object({
  limit: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(100))),
});

/** A project's objectives: availability (share of requests that are not 5xx) and the latency p95 must stay under. */
export const objectivesBody = z.strictObject({
  availability: z.number().check(z.gte(0.9), z.lte(0.99999)),
  latencyP95Ms: z.number().check(z.int(), z.gte(50), z.lte(10_000)),
});
