import { recountReactions } from '#domain/messages/reaction-counter';
import { groupedEventSubscriber } from '#edge/message-subscriber';

const REACTION_CHANGES = new Set(['reaction_added', 'reaction_removed']);

/**
 * The reaction counter's queue consumer: the reactions of a batch are counted by message, one
 * recount of each message however many of its reactions the batch holds; other changes are not its.
 */
export const handler = groupedEventSubscriber(
  'counting reactions',
  ['message.updated'],
  (event) =>
    REACTION_CHANGES.has(event.payload.change) ? `${event.projectId}|${event.payload.roomId}|${event.payload.messageId}` : undefined,
  async ([first]) => {
    if (first) await recountReactions({ projectId: first.projectId, roomId: first.payload.roomId, messageId: first.payload.messageId });
  },
);
