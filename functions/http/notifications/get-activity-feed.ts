import { readActivityFeed } from '#domain/notifications/feed';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { pageQuery } from './schemas';

const query = z.object(pageQuery);

export const handler = httpHandler('GetActivityFeed', { query }, async ({ query, user }) =>
  ok(await readActivityFeed(user.projectId, user.userId, query)),
);
