import { readMessages } from '#domain/messages/history';
import { ID_SLOTS_PER_MS } from '#domain/messages/message-ids';
import { accessRoom } from '#domain/rooms/rooms';
import { parsePart } from '#edge/middlewares/validation';
import { declareRouteSchemas } from '#edge/route-schemas';
import { streamHandler } from '#edge/stream';
import { config } from '#shared/config';
import type { Message } from '#shared/db/message';
import { BadRequestError } from '#shared/errors';
import * as z from '#shared/schema';
import { messageIdParam, roomParams } from '../params';

/**
 * Ids are `createdAtMs × 1000 + slot`, and two writers can land a slightly older id after a newer
 * one. Every poll re-reads this much time behind the newest id sent and skips what it already
 * sent, so a late write is still delivered.
 */
const LATE_WRITE_WINDOW_IDS = 5_000 * ID_SLOTS_PER_MS;
const PAGE = 100;

/** The resume point: the `Last-Event-ID` header (EventSource) or `?lastEventId=` (first connects, proxies that drop headers). */
function parseLastEventId(header: string | undefined, query: string | undefined): number | undefined {
  const [value, field] = header !== undefined && header !== '' ? [header, 'header.last-event-id'] : [query, 'query.lastEventId'];
  if (value === undefined || value === '') return undefined;
  const parsed = messageIdParam.safeParse(value);
  if (!parsed.success)
    throw new BadRequestError(`Invalid request: ${field}: must be a message id`, [{ field, message: 'must be a message id' }]);
  return parsed.data;
}

// The stream reads its parts itself (the header wins over the query); declared for the API description.
declareRouteSchemas('StreamRoom', { params: roomParams, query: z.object({ lastEventId: z.optional(messageIdParam) }) });

const sseMessage = (message: Message) => `id: ${message.id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * `GET /rooms/{roomId}/stream`: the room's new messages as server-sent events. Lambda cannot be
 * told about new rows, so the stream polls the room's message partition (one Query per
 * `SSE_POLL_INTERVAL_MS`), sends a heartbeat comment every `SSE_HEARTBEAT_MS`, and ends after
 * `SSE_MAX_DURATION_SECONDS`; EventSource (and the SDK) reconnect with `Last-Event-ID`.
 */
export const handler = streamHandler('StreamRoom', async (request) => {
  const { roomId } = parsePart(roomParams, request.params, 'path');
  const lastEventId = parseLastEventId(request.headers['last-event-id'], request.query.lastEventId);
  const { user } = request;
  await accessRoom(user, roomId, { join: true });

  const floor = lastEventId ?? (await readMessages(user.projectId, roomId, { limit: 1 })).messages[0]?.id ?? 0;
  const out = await request.open({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform' });
  let open = true;
  void request.closed.then(() => {
    open = false;
  });
  const write = (text: string) => {
    if (open && !out.writableEnded && !out.destroyed) out.write(text);
  };
  write('retry: 1000\n\n');

  const sent = new Set<number>();
  let newest = floor;
  const deadline = Date.now() + config.SSE_MAX_DURATION_SECONDS * 1000;
  let lastWrite = Date.now();
  while (open && Date.now() < deadline) {
    let after = Math.max(floor, newest - LATE_WRITE_WINDOW_IDS);
    for (;;) {
      const page = await readMessages(user.projectId, roomId, { after, limit: PAGE });
      for (const message of page.messages) {
        if (message.id <= floor || sent.has(message.id)) continue;
        write(sseMessage(message));
        sent.add(message.id);
        newest = Math.max(newest, message.id);
        lastWrite = Date.now();
      }
      const last = page.messages.at(-1);
      if (!page.hasMore || !last) break;
      after = last.id;
    }
    for (const id of sent) if (id < newest - LATE_WRITE_WINDOW_IDS) sent.delete(id);
    if (Date.now() - lastWrite >= config.SSE_HEARTBEAT_MS) {
      write(': heartbeat\n\n');
      lastWrite = Date.now();
    }
    await Promise.race([new Promise((resolve) => setTimeout(resolve, config.SSE_POLL_INTERVAL_MS)), request.closed]);
  }
});
