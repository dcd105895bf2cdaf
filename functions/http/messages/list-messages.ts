import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, listMessages, MAX_PAGE_SIZE } from '#domain/messages/history';
import { httpHandler, ok } from '#shared/http';
import { queryInt, roomParams } from '../params';

const messageIdParam = z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const query = z.object({
  before: messageIdParam.optional(),
  after: messageIdParam.optional(),
  limit: queryInt(1, MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
});

export const handler = httpHandler('ListRoomMessages', { params: roomParams, query }, async ({ params, query, caller }) =>
  ok(await listMessages(caller, params.roomId, query)),
);
