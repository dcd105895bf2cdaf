import * as z from '#shared/schema';
import { queryInt } from '../params';

/** Notification and feed entry ids: the creation time in ms (15 digits), a dash, 16 hex digits of the source. */
export const entryId = z
  .string()
  .check(z.regex(/^\d{15}-[0-9a-f]{16}$/, 'must be an id as the list answers it (15 digits, -, 16 hex digits)'));

export const notificationParams = z.object({ notificationId: entryId });

/** A page: `limit` 1-100 (default 20), `cursor` the `nextCursor` of the previous page. */
export const pageQuery = {
  limit: z._default(queryInt(1, 100), 20),
  cursor: z.optional(entryId),
};
