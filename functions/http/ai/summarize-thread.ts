import { summarizeThread } from '#domain/ai/thread-summary';
import { httpHandler, ok } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

const params = z.object({ messageId: z.pipe(z.string().check(z.regex(/^\d{1,16}$/, 'must be a message id')), z.transform(Number)) });
const body = z.strictObject({ roomId: idSchema });

export const handler = httpHandler('SummarizeThread', { params, body }, async ({ params, body, user }) =>
  ok(await summarizeThread(user, body.roomId, params.messageId)),
);
