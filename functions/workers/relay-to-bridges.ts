import { relayMessage } from '#domain/bridges/relay';
import { messageCreatedSubscriber } from '#edge/message-subscriber';

/** The bridge relay's queue consumer: each new message of a bridged room goes to the room's other bridges' channels. */
export const handler = messageCreatedSubscriber('relaying to bridges', relayMessage);
