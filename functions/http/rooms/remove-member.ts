import { removeMember } from '#domain/rooms/rooms';
import { httpHandler, noContent } from '#edge/http';
import { roomMemberParams } from '../params';

export const handler = httpHandler('RemoveRoomMember', { params: roomMemberParams }, async ({ params, caller }) => {
  await removeMember(caller, params.roomId, params.userId);
  return noContent();
});
