import { listAutoFlags } from '#domain/moderation/block-list';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.object({ limit: z._default(queryInt(1, 100), 50) });

export const handler = httpHandler('ListModerationFlags', { query }, async ({ query, caller }) =>
  ok({ flags: await listAutoFlags(caller.projectId, query.limit) }),
);
