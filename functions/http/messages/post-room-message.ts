import { roomMessageSchema } from '#domain/messages/message-input';
import { sendMessage } from '#domain/messages/pipeline';
import { httpHandler } from '#edge/http';
import { roomParams } from '../params';

/** Like `POST /messages` with the room in the path; `userId`/`createdAt` need an admin token or the API key. */
export const handler = httpHandler(
  'PostRoomMessage',
  { params: roomParams, body: roomMessageSchema },
  async ({ params, body, caller, sourceIp }) => {
    const { message, created } = await sendMessage(caller, { ...body, roomId: params.roomId }, { source: 'api', sourceIp });
    return { status: created ? 201 : 200, body: message };
  },
);
