import { importMessages, MAX_IMPORT_ROWS } from '#domain/messages/import';
import { importRowSchema } from '#domain/messages/message-input';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';

const body = z.strictObject({
  messages: z.array(importRowSchema).check(z.minLength(1), z.maxLength(MAX_IMPORT_ROWS, `at most ${MAX_IMPORT_ROWS} rows per request`)),
});

export const handler = httpHandler('ImportMessageBatch', { body }, async ({ body, caller }) =>
  ok(await importMessages(caller, body.messages)),
);
