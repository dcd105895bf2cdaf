import { createCannedResponse } from '#domain/support/canned-responses';
import { created, httpHandler } from '#edge/http';
import { cannedResponseBody } from './schemas';

/** 201 with the response; 409 shortcut_taken, 409 canned_responses_full. */
export const handler = httpHandler('CreateCannedResponse', { body: cannedResponseBody }, async ({ body, caller }) =>
  created(await createCannedResponse(caller, body)),
);
