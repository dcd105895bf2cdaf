import { listNotifications } from '#domain/notifications/inbox';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { pageQuery } from './schemas';

const query = z.object({
  ...pageQuery,
  unread: z.pipe(
    z._default(z.enum(['true', 'false']), 'false'),
    z.transform((value) => value === 'true'),
  ),
});

export const handler = httpHandler('ListNotifications', { query }, async ({ query, user }) =>
  ok(await listNotifications(user.projectId, user.userId, query)),
);
