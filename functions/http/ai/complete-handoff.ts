import { completeHandoff } from '#domain/ai/handoff';
import { httpHandler, ok } from '#edge/http';
import { roomParams } from '../params';
import { completeHandoffBody } from './handoff-schemas';

/** 200 with the completed record; 409 no_active_handoff, 400 unknown_disposition. */
export const handler = httpHandler(
  'CompleteRoomHandoff',
  { params: roomParams, body: completeHandoffBody },
  async ({ params, body, caller }) => ok(await completeHandoff(caller, params.roomId, body)),
);
