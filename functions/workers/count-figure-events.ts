import { aggregateFigures } from '#domain/stats/figures';
import { groupedEventSubscriber } from '#edge/message-subscriber';

/** Messages per project per minute, from the outbox's `message.created`: one update per project-minute of a batch. */
export const handler = groupedEventSubscriber(
  'counting figures',
  ['message.created'],
  (event) => `${event.projectId}|${Math.floor(Date.parse(event.createdAt) / 60_000)}`,
  (events) =>
    aggregateFigures(events.map((event) => ({ projectId: event.projectId, at: Date.parse(event.createdAt), counts: { messages: 1 } }))),
);
