import { askAi, conversation, refuseE2eRoom, requireAi } from '#domain/ai/assistant';
import { readMessages } from '#domain/messages/history';
import { accessRoom } from '#domain/rooms/rooms';
import type { UserPrincipal } from '#shared/auth';
import { MessageNotFoundError } from '#shared/errors';

/** Messages of context a suggestion reads: enough for the thread of talk, small enough to answer fast. */
const CONTEXT_MESSAGES = 20;
export const MAX_SUGGESTIONS = 3;
const MAX_SUGGESTION_CHARS = 300;

/**
 * `POST /messages/suggest-replies`: up to three short replies the caller might send next, from the
 * room's latest messages (or those up to `messageId`, to answer that one). Members of the room only.
 */
export async function suggestReplies(principal: UserPrincipal, roomId: string, messageId?: number) {
  requireAi();
  const { room } = await accessRoom(principal, roomId, { join: false });
  refuseE2eRoom(room);
  const { messages } = await readMessages(principal.projectId, roomId, {
    limit: CONTEXT_MESSAGES,
    ...(messageId === undefined ? {} : { before: messageId + 1 }),
  });
  if (messageId !== undefined && messages.at(-1)?.id !== messageId) throw new MessageNotFoundError();
  const answer = await askAi(principal.projectId, 'suggestions', [
    {
      role: 'system',
      content:
        `You suggest replies for ${principal.userId} in a chat. Answer with exactly ${MAX_SUGGESTIONS} short, distinct replies ` +
        'they could send next, one per line, without numbering or quotes.',
    },
    { role: 'user', content: `Conversation (oldest first):\n${conversation(messages)}` },
  ]);
  const suggestions = answer.content
    .split('\n')
    .map((line) =>
      line
        .trim()
        .replace(/^([-*•]|\d+[.)])\s*/, '')
        .replace(/^["“](.*)["”]$/, '$1')
        .trim(),
    )
    .filter(Boolean)
    .map((line) => line.slice(0, MAX_SUGGESTION_CHARS))
    .slice(0, MAX_SUGGESTIONS);
  return { suggestions, model: answer.model };
}
