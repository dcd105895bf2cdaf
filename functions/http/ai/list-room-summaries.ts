import { listRoomSummaries } from '#domain/ai/room-summaries';
import { httpHandler, ok } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

const params = z.object({ roomId: idSchema });
const query = z.object({
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 20),
});

export const handler = httpHandler('ListRoomSummaries', { params, query }, async ({ params, query, caller }) =>
  ok({ summaries: await listRoomSummaries(caller, params.roomId, query.limit) }),
);
