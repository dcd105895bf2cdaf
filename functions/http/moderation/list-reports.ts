import { listReports } from '#domain/moderation/reports';
import { httpHandler, ok } from '#edge/http';
import { reportStatus } from '#shared/db/report';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.object({
  status: z._default(reportStatus, 'open'),
  limit: z._default(queryInt(1, 100), 50),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});

export const handler = httpHandler('ListReports', { query }, async ({ query, caller }) => ok(await listReports(caller.projectId, query)));
