import { addReaction } from '#domain/messages/reactions';
import { httpHandler } from '#edge/http';
import { roomQuery } from '../params';
import { reactionParams } from './schemas';

/** `201` when the reaction is new, `200` when the caller had it already. */
export const handler = httpHandler('AddReaction', { params: reactionParams, query: roomQuery }, async ({ params, query, user }) => {
  const { changed, ...reaction } = await addReaction(user, query.roomId, params.messageId, params.emoji);
  return { status: changed ? 201 : 200, body: reaction };
});
