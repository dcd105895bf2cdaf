import { claimantOf, claimEvent, completeEventClaim, releaseEventClaim } from '#shared/db/event-claim';
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
 * A subscriber whose work for one event falls into independent parts (the bridge relay: one post
 * per bridge of the room) names the `part`: each part is claimed on its own, so a retry after one
 * part failed does that part again, never the parts already done.
 *
 * @returns whether `work` ran
 */
export async function onceFor(
  subscriber: string,
  event: DomainEvent,
  work: () => Promise<void>,
  options: { readonly part?: string } = {},
): Promise<boolean> {
  const entry = eventSubscribers.find((candidate) => candidate.id === subscriber);
  if (!entry) throw new Error(`No event subscriber ${subscriber} in functions/wiring/`);
  const claimant = claimantOf(subscriber, options.part);
  const now = Date.now();
  if (!(await claimEvent(event.projectId, event.id, claimant, now, now + entry.timeoutSeconds * 1000))) return false;
  try {
    await work();
  } catch (error) {
    await releaseEventClaim(event.projectId, event.id, claimant).catch(() => undefined);
    throw error;
  }
  await completeEventClaim(event.projectId, event.id, claimant);
  return true;
}
