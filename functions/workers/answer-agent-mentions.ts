import { answerMentions } from '#domain/ai/agents';
import { messageCreatedSubscriber } from '#edge/message-subscriber';

/** The agent mention subscriber's queue consumer: an `@agent:<handle>` in a new message makes that agent answer in the room. */
export const handler = messageCreatedSubscriber('answering agent mentions', answerMentions);
