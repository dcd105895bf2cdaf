import { subscribersOf } from '#domain/webhooks/registrations';
import { logger } from '#shared/logger';
import { publishEvents } from '#shared/queue';

/** The realtime events webhooks may subscribe to, with the spec's payloads. */
export type RealtimeEvent =
  | { type: 'room.occupied' | 'room.vacated' | 'cache_miss'; payload: { roomId: string; at: string } }
  | { type: 'member_joined' | 'member_left'; payload: { roomId: string; userId: string; subscriptionCount: number } }
  | { type: 'subscription_count'; payload: { roomId: string; subscriptionCount: number } }
  | { type: 'client_event'; payload: { roomId: string; event: string; data: unknown } }
  | { type: 'user.event'; payload: { userId: string; event: string; data: unknown } };

/**
 * Publishes realtime events to the events queue, but only the types some webhook of the project
 * subscribes to (the registration list is cached per instance): presence and client events are
 * frequent, and an SQS request nobody reads is pure cost. Failures are logged, never thrown:
 * the realtime frames already went out.
 */
export async function publishRealtimeEvents(projectId: string, events: readonly RealtimeEvent[]): Promise<void> {
  if (events.length === 0) return;
  try {
    const wanted = await Promise.all(events.map(async (event) => (await subscribersOf(projectId, event.type)).length > 0));
    const createdAt = new Date().toISOString();
    const chosen = events.filter((_, index) => wanted[index]).map((event) => ({ ...event, projectId, createdAt }));
    if (chosen.length > 0) await publishEvents(chosen);
  } catch (error) {
    logger.error('publishing realtime events failed', { error: error as Error, events });
  }
}
