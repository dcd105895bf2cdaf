import { answerMentions } from '#domain/ai/agents';
import { parseEvent } from '#shared/events';
import { logger } from '#shared/logger';
import { sqsBatchHandler } from '#shared/sqs-batch';

/** The agent mention subscriber's queue consumer: an `@agent:<handle>` in a new message makes that agent answer in the room. */
export const handler = sqsBatchHandler('answering agent mentions', async (body) => {
  const event = parseEvent(body);
  if (event.type !== 'message.created') {
    // The subscription's filter policy lets message.created through only.
    logger.warn('an event this subscriber does not take reached its queue', { type: event.type, eventId: event.id });
    return;
  }
  await answerMentions(event);
});
