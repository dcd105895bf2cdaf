import middy from '@middy/core';
import { type AttemptState, attemptDelivery } from '#domain/webhooks/deliveries';

/**
 * The retry state machine's task: one attempt of one delivery. Its output feeds the Choice state
 * (`status` still `pending` → wait until `nextAttemptAt` and come back).
 */
export const handler = middy<AttemptState, AttemptState>().handler(async (state) => attemptDelivery(state.projectId, state.deliveryId));
