import { reportMessage } from '#domain/moderation/reports';
import { httpHandler } from '#edge/http';
import { reportReason } from '#shared/db/report';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { messageParams } from '../params';

export const MAX_REPORT_NOTE_LENGTH = 1000;

const body = z.strictObject({
  roomId: idSchema,
  reason: reportReason,
  note: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_REPORT_NOTE_LENGTH))),
});

/** `201` with the report; a second report of the message by the same user is `409 already_reported`. */
export const handler = httpHandler('ReportMessage', { params: messageParams, body }, async ({ params, body, user }) => ({
  status: 201,
  body: await reportMessage(user, params.messageId, body),
}));
