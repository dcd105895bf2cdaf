import { claimEvent, completeEventClaim, releaseEventClaim } from '#shared/db/event-claim';
import type { DomainEvent } from '#shared/events';
import { eventSubscribers } from '#wiring';

/**
 * Runs `work` for an event at most once per subscriber (an `eventSubscribers` id of `functions/wiring/`),
 * however often the fan-out delivers it (SNS and SQS deliver at least once, and the publisher
 * republishes after a partial failure). A claim
 * item is written first with a lease as long as the subscriber may run; a second delivery meanwhile
 * or afterwards skips. If `work` throws, the claim is released so the retry runs it; if the
 * function dies mid-way, the lease runs out and the retry takes the claim over. Costs two writes,
 * so subscribers call it only when there is work to protect (watchers exist).
 *
 * @returns whether `work` ran
 */
export async function onceFor(subscriber: string, event: DomainEvent, work: () => Promise<void>): Promise<boolean> {
  const entry = eventSubscribers.find((candidate) => candidate.id === subscriber);
  if (!entry) throw new Error(`No event subscriber ${subscriber} in functions/wiring/`);
  const now = Date.now();
  if (!(await claimEvent(event.projectId, event.id, subscriber, now, now + entry.timeoutSeconds * 1000))) return false;
  try {
    await work();
  } catch (error) {
    await releaseEventClaim(event.projectId, event.id, subscriber).catch(() => undefined);
    throw error;
  }
  await completeEventClaim(event.projectId, event.id, subscriber);
  return true;
}
