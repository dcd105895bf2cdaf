import { emitEvents, newEvent } from '#domain/events/outbox';
import { subscribersOf } from '#domain/webhooks/registrations';
import type { EventPayload } from '#shared/events';
import { logger } from '#shared/logger';

type RealtimeEventType =
  | 'room.occupied'
  | 'room.vacated'
  | 'cache_miss'
  | 'member_joined'
  | 'member_left'
  | 'subscription_count'
  | 'client_event'
  | 'user.event';

/** A realtime event webhooks may subscribe to, with the catalogue's payload. */
export type RealtimeEvent = { [T in RealtimeEventType]: { type: T; payload: EventPayload<T> } }[RealtimeEventType];

/**
 * Emits realtime events through the outbox, but only the types some webhook of the project
 * subscribes to (the registration list is cached per instance): presence and client events are
 * frequent, and a write nobody reads is pure cost. Nothing here is a stored change, so the outbox
 * item is the whole write. Failures are logged, never thrown: the realtime frames already went out.
 */
export async function publishRealtimeEvents(projectId: string, events: readonly RealtimeEvent[]): Promise<void> {
  if (events.length === 0) return;
  try {
    const wanted = await Promise.all(events.map(async (event) => (await subscribersOf(projectId, event.type)).length > 0));
    const chosen = events.filter((_, index) => wanted[index]).map((event) => newEvent(event.type, projectId, event.payload as never));
    await emitEvents(chosen);
  } catch (error) {
    logger.error('emitting realtime events failed', { error: error as Error, events });
  }
}
