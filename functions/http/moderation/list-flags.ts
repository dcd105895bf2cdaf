import { z } from 'zod';
import { listAutoFlags } from '#domain/moderation/block-list';
import { httpHandler, ok } from '#shared/http';
import { queryInt } from '../params';

const query = z.object({ limit: queryInt(1, 100).default(50) });

export const handler = httpHandler('ListModerationFlags', { query }, async ({ query, caller }) =>
  ok({ flags: await listAutoFlags(caller.projectId, query.limit) }),
);
