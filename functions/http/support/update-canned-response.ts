import { updateCannedResponse } from '#domain/support/canned-responses';
import { httpHandler, ok } from '#edge/http';
import { cannedResponseParams, cannedResponsePatch } from './schemas';

/** 200 with the response; 404 canned_response_not_found, 409 shortcut_taken. */
export const handler = httpHandler(
  'UpdateCannedResponse',
  { params: cannedResponseParams, body: cannedResponsePatch },
  async ({ params, body, caller }) => ok(await updateCannedResponse(caller, params.responseId, body)),
);
