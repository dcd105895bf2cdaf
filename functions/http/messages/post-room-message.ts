import { postMessage } from '#domain/messages/commands';
import { roomMessageSchema } from '#domain/messages/message-input';
import { httpHandler } from '#edge/http';
import { roomParams } from '../params';

/** Like `POST /messages` with the room in the path (slash commands too); `userId`/`createdAt` need an admin token or the API key. */
export const handler = httpHandler(
  'PostRoomMessage',
  { params: roomParams, body: roomMessageSchema },
  async ({ params, body, caller, sourceIp }) => {
    const outcome = await postMessage(caller, { ...body, roomId: params.roomId }, { source: 'api', sourceIp });
    if (outcome.kind === 'command') return { status: 200, body: outcome.result };
    return { status: outcome.sent.created ? 201 : 200, body: outcome.sent.message };
  },
);
