import { z } from 'zod';
import { importMessages, MAX_IMPORT_ROWS } from '#domain/messages/import';
import { importRowSchema } from '#domain/messages/message-input';
import { httpHandler, ok } from '#shared/http';

const body = z
  .object({ messages: z.array(importRowSchema).min(1).max(MAX_IMPORT_ROWS, `at most ${MAX_IMPORT_ROWS} rows per request`) })
  .strict();

export const handler = httpHandler('ImportMessageBatch', { body }, async ({ body, caller }) =>
  ok(await importMessages(caller, body.messages)),
);
