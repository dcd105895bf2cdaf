import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { type AttemptState, attemptDelivery } from '#domain/webhooks/deliveries';
import { type GiveUpInput, giveUpDelivery } from '#domain/webhooks/give-up';
import { observability } from '#edge/middlewares/observability';

/**
 * The retry state machine's task: one attempt of one delivery. Its output feeds the Choice state
 * (`status` still `pending` → wait until `nextAttemptAt` and come back). The machine's `Catch`
 * calls it once more with `giveUp` when an attempt failed outside the schedule, to mark the
 * delivery failed.
 */
export const handler = middy<AttemptState | GiveUpInput, AttemptState, Error, Context>()
  .use(observability<AttemptState | GiveUpInput, Context>(({ event }) => ({ projectId: event.projectId, deliveryId: event.deliveryId })))
  .handler(async (input) => ('giveUp' in input ? giveUpDelivery(input) : attemptDelivery(input.projectId, input.deliveryId)));
