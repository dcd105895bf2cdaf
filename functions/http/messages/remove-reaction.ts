import { removeReaction } from '#domain/messages/reactions';
import { httpHandler, noContent } from '#edge/http';
import { roomQuery } from '../params';
import { reactionParams } from './schemas';

/** `204`, also when the caller had no such reaction. */
export const handler = httpHandler('RemoveReaction', { params: reactionParams, query: roomQuery }, async ({ params, query, user }) => {
  await removeReaction(user, query.roomId, params.messageId, params.emoji);
  return noContent();
});
