import { startHandoff } from '#domain/ai/handoff';
import { created, httpHandler } from '#edge/http';
import { roomParams } from '../params';
import { startHandoffBody } from './handoff-schemas';

/** 201 with the handoff record (`human_active`); 409 handoff_active while one is active. */
export const handler = httpHandler('StartRoomHandoff', { params: roomParams, body: startHandoffBody }, async ({ params, body, caller }) =>
  created(await startHandoff(caller, params.roomId, body)),
);
