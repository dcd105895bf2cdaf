import { decideReport } from '#domain/moderation/reports';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';

const params = z.object({ reportId: z.string().check(z.regex(/^rpt_[0-9a-f]{24}$/, 'must be a report id (rpt_ and 24 hex digits)')) });
const body = z.strictObject({
  status: z.enum(['resolved', 'dismissed']),
  note: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(1000))),
});

/** `200` with the closed report; a closed report is `409 report_closed`. */
export const handler = httpHandler('DecideReport', { params, body }, async ({ params, body, caller }) =>
  ok(await decideReport(caller, params.reportId, body)),
);
