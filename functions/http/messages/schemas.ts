import { emojiSchema } from '#domain/messages/reactions';
import * as z from '#shared/schema';
import { messageIdParam } from '../params';

export const reactionParams = z.object({ messageId: messageIdParam, emoji: emojiSchema });
