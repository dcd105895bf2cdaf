import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import type { MessageItem } from '#shared/db/message';
import type { RoomItem } from '#shared/db/room';
import { listWebhookItems } from '#shared/db/webhook';
import type { DomainEvent, EventFilterAttribute } from '#shared/events';
import { isAgentUserId } from '#shared/ids';
import { mentionedUserIds } from './message-events';

/**
 * The filter attributes of the events on the topic (`EVENT_FILTER_ATTRIBUTES` of
 * `functions/wiring/event-types.ts`; docs/architecture.md "Events between areas" tables who filters
 * on which). Each is `'true'` or absent. A message's come from its item: what the send knew from the
 * room it read anyway, and its own text; no request is made for them on the sender's path.
 */
export type FilterAttributes = Partial<Record<EventFilterAttribute, 'true'>>;

/** What a message item copies from the room the send read (cached up to `CACHE_TTL_MS`): one spread in the pipeline's `base`. */
export function roomFlagsOf(room: RoomItem): Pick<MessageItem, 'bridged' | 'dm' | 'pushTargets' | 'watched'> {
  return {
    ...((room.bridgeCount ?? 0) > 0 ? { bridged: true as const } : {}),
    ...(room.type === 'dm' ? { dm: true as const } : {}),
    // A room older than the flags (no `wakeFlagsKept`) may have either without saying so.
    ...(room.pushTargets || !room.wakeFlagsKept ? { pushTargets: true as const } : {}),
    ...(room.watched || !room.wakeFlagsKept ? { watched: true as const } : {}),
  };
}

const flag = (on: boolean | undefined) => (on ? ('true' as const) : undefined);

/** The attributes of a stored message's `message.created`. */
export function messageCreatedAttributes(message: MessageItem): FilterAttributes {
  const mentioned = mentionedUserIds(message.content, message.userId);
  const attributes: FilterAttributes = {
    bridged: flag(message.bridged),
    // The agent subscriber answers no agent (agents never wake agents), so an agent's message needs none.
    agentMention: flag(!isAgentUserId(message.userId) && mentioned.some(isAgentUserId)),
    notify: flag(mentioned.length > 0 || message.parent_id !== null || message.dm),
    pushTargets: flag(message.pushTargets),
    watched: flag(message.watched),
  };
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value)) as FilterAttributes;
}

/** The event types each project's registrations subscribe to; the promise is kept, so a batch of one project reads them once. */
const registeredTypes = new TtlCache<Promise<Set<string>>>(config.CACHE_TTL_MS);

function registeredTypesOf(projectId: string): Promise<Set<string>> {
  const cached = registeredTypes.get(projectId);
  if (cached) return cached;
  const read = listWebhookItems(projectId).then((webhooks) => new Set(webhooks.flatMap((webhook) => webhook.eventTypes)));
  registeredTypes.set(projectId, read);
  // A failed read is not kept: the next event asks again.
  read.catch(() => registeredTypes.delete(projectId));
  return read;
}

/** Called by whoever changes a project's registrations in this instance. */
export const forgetRegisteredTypes = (projectId: string) => registeredTypes.delete(projectId);

/**
 * The `webhook` attribute of any event: whether a registration of its project subscribes to its
 * type. Read by the publisher (off the sender's path), one Query per project per `CACHE_TTL_MS` and
 * instance. A registration made meanwhile is missed for at most that long, as the dispatcher's own
 * registrations cache (`#domain/webhooks/registrations`) already allowed; a deleted one only wakes
 * the dispatcher for nothing.
 */
export async function webhookAttribute(event: DomainEvent): Promise<FilterAttributes> {
  return (await registeredTypesOf(event.projectId)).has(event.type) ? { webhook: 'true' } : {};
}

/** An event and the filter attributes it travels with. */
export interface AttributedEvent {
  readonly event: DomainEvent;
  readonly attributes: FilterAttributes;
}

/** The events of a stream record with their attributes; `message` is the item they derive from, when a message's. */
export function withFilterAttributes(events: readonly DomainEvent[], message?: MessageItem): Promise<AttributedEvent[]> {
  return Promise.all(
    events.map(async (event) => ({
      event,
      attributes: {
        ...(message && event.type === 'message.created' ? messageCreatedAttributes(message) : {}),
        ...(await webhookAttribute(event)),
      },
    })),
  );
}
