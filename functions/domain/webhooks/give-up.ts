import { failPendingDelivery, findDelivery } from '#shared/db/webhook-delivery';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { type AttemptState, WEBHOOK_FAILED_METRIC } from './deliveries';

/**
 * What the retry state machine's `Catch` hands its give-up task: the delivery and the error
 * (Step Functions' `{ Error, Cause }`) that stopped the schedule.
 */
export interface GiveUpInput {
  readonly projectId: string;
  readonly deliveryId: string;
  readonly giveUp: { readonly Error?: string; readonly Cause?: string };
  /** Not passed by the machine's give-up step (see the ASL's comment); typed so the task reads both inputs alike. */
  readonly traceId?: string;
}

/**
 * Ends the retry schedule of a delivery whose attempt failed outside the schedule (the attempt
 * function threw, timed out or could not be invoked): a pending delivery becomes `failed`, the one
 * state replay accepts, with the error as `last_error`, and counts as a failed delivery. A delivery
 * that is no longer pending is left as it is.
 */
export async function giveUpDelivery(input: GiveUpInput): Promise<AttemptState> {
  const { projectId, deliveryId } = input;
  const lastError = `the retry schedule stopped: ${input.giveUp.Error ?? 'unknown error'}`;
  if (!(await failPendingDelivery(projectId, deliveryId, lastError))) {
    const status = (await findDelivery(projectId, deliveryId))?.status ?? 'failed';
    logger.warn('giving up on a delivery that is no longer pending; left as it is', { deliveryId, status });
    return { projectId, deliveryId, status, nextAttemptAt: null };
  }
  countMetric(WEBHOOK_FAILED_METRIC, 1, { projectId });
  logger.warn('webhook delivery failed: its retry schedule stopped on an error', { deliveryId, error: input.giveUp });
  return { projectId, deliveryId, status: 'failed', nextAttemptAt: null };
}
