import { editMessage } from '#domain/messages/lifecycle';
import { messageFields } from '#domain/messages/message-input';
import { httpHandler, ok } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { messageParams } from '../params';

/** The new content passes the same schema as a sent message's. */
const body = z.strictObject({ roomId: idSchema, content: messageFields.content });

/** `200` with the edited message (`editedAt`, `editCount`). */
export const handler = httpHandler('EditMessage', { params: messageParams, body }, async ({ params, body, user }) =>
  ok(await editMessage(user, body.roomId, params.messageId, body.content)),
);
