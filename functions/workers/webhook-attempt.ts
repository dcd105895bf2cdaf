import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { type AttemptState, attemptDelivery } from '#domain/webhooks/deliveries';
import { type GiveUpInput, giveUpDelivery } from '#domain/webhooks/give-up';
import { observability } from '#edge/middlewares/observability';
import { traceId } from '#edge/middlewares/trace-id';
import { currentTraceId, inRequestContext } from '#shared/request-context';

/**
 * The retry state machine's task: one attempt of one delivery. Its output feeds the Choice state
 * (`status` still `pending` → wait until `nextAttemptAt` and come back). The machine's `Catch`
 * calls it once more with `giveUp` when an attempt failed outside the schedule, to mark the
 * delivery failed. The trace id travels in the machine's state (`traceId`), so each attempt logs
 * under the id of the request that sent the event, and hands it on in its output.
 */
type TaskInput = AttemptState | GiveUpInput;
export const handler = inRequestContext(
  middy<TaskInput, AttemptState, Error, Context>()
    .use(traceId<TaskInput>({ carried: (event) => event.traceId }) as MiddlewareObj<TaskInput, unknown, Error, Context>)
    .use(observability<TaskInput, Context>(({ event }) => ({ projectId: event.projectId, deliveryId: event.deliveryId })))
    .handler(async (input) => ({
      ...('giveUp' in input ? await giveUpDelivery(input) : await attemptDelivery(input.projectId, input.deliveryId)),
      traceId: currentTraceId(),
    })),
);
