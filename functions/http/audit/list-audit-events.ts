import { listAuditEvents } from '#domain/audit/audit-log';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.strictObject({
  limit: z._default(queryInt(1, 100), 50),
  // The `nextCursor` of the previous page: base64url of an event's sort key.
  cursor: z.optional(
    z.string().check(
      z.maxLength(200),
      z.refine(
        (cursor) => /^E#\d{4}-\d\d-\d\dT[\d:.]+Z#aud_[A-Za-z0-9]+$/.test(Buffer.from(cursor, 'base64url').toString('utf8')),
        'must be the nextCursor of the previous page',
      ),
    ),
  ),
});

export const handler = httpHandler('ListAuditEvents', { query }, async ({ query, caller }) =>
  ok(await listAuditEvents(caller.projectId, query)),
);
