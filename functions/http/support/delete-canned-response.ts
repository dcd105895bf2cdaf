import { deleteCannedResponse } from '#domain/support/canned-responses';
import { httpHandler, noContent } from '#edge/http';
import { cannedResponseParams } from './schemas';

/** 204; 404 canned_response_not_found. */
export const handler = httpHandler('DeleteCannedResponse', { params: cannedResponseParams }, async ({ params, caller }) => {
  await deleteCannedResponse(caller, params.responseId);
  return noContent();
});
