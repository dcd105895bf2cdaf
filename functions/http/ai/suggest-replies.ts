import { suggestReplies } from '#domain/ai/suggestions';
import { httpHandler, ok } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

const body = z.strictObject({ roomId: idSchema, messageId: z.optional(z.number().check(z.int(), z.positive())) });

/** Gated by the `reply_suggestions` flag (the wiring table): off, it answers 403 `feature_disabled`. */
export const handler = httpHandler('SuggestReplies', { body }, async ({ body, user }) =>
  ok(await suggestReplies(user, body.roomId, body.messageId)),
);
