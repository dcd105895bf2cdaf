import { z } from 'zod';
import { MAX_BLOCK_LIST_TERMS, MAX_TERM_LENGTH, replaceBlockList } from '#domain/moderation/block-list';
import { actorId } from '#shared/auth';
import { httpHandler, ok } from '#shared/http';

const body = z.object({ terms: z.array(z.string().trim().min(1).max(MAX_TERM_LENGTH)).max(MAX_BLOCK_LIST_TERMS) }).strict();

export const handler = httpHandler('ReplaceBlockList', { body }, async ({ body, caller }) =>
  ok(await replaceBlockList(caller.projectId, body.terms, actorId(caller))),
);
