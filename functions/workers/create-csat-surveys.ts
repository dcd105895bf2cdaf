import { surveysForCompletedHandoff } from '#domain/support/csat';
import { eventSubscriber } from '#edge/message-subscriber';

/** The CSAT subscriber's queue consumer: a pending survey for each customer of a room whose handoff completed. */
export const handler = eventSubscriber('creating csat surveys', ['handoff'], surveysForCompletedHandoff);
