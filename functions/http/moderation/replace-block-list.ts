import { MAX_BLOCK_LIST_TERMS, MAX_TERM_LENGTH, replaceBlockList } from '#domain/moderation/block-list';
import { httpHandler, ok } from '#edge/http';
import { actorId } from '#shared/auth';
import * as z from '#shared/schema';

const body = z.strictObject({
  terms: z.array(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_TERM_LENGTH))).check(z.maxLength(MAX_BLOCK_LIST_TERMS)),
});

export const handler = httpHandler('ReplaceBlockList', { body }, async ({ body, caller }) =>
  ok(await replaceBlockList(caller.projectId, body.terms, actorId(caller))),
);
