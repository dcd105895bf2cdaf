import { config } from '#shared/config';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { parseHttpUrl } from '#shared/urls';

export const MAX_ATTACHMENTS = 10;
export const MAX_CLIENT_MESSAGE_ID_LENGTH = 128;
/** Backdated messages may not predate this (ids are derived from the timestamp). */
export const EARLIEST_CREATED_AT = Date.parse('2000-01-01T00:00:00.000Z');
/** Clock skew tolerated for a `createdAt` slightly in the future. */
export const FUTURE_SKEW_MS = 5 * 60_000;

export const attachmentsSchema = z
  .array(
    z.string().check(
      z.maxLength(2048),
      z.refine((value) => parseHttpUrl(value) !== undefined, 'must be an http or https URL'),
    ),
  )
  .check(z.maxLength(MAX_ATTACHMENTS));

const createdAtSchema = z.string().check(
  z.superRefine((value, context) => {
    const at = Date.parse(value);
    const problem = !z.iso.datetime({ offset: true }).safeParse(value).success
      ? 'must be an ISO 8601 timestamp'
      : at < EARLIEST_CREATED_AT
        ? 'must not be before 2000-01-01'
        : at > Date.now() + FUTURE_SKEW_MS
          ? 'must not be in the future'
          : undefined;
    if (problem) context.addIssue({ code: 'custom', message: problem });
  }),
);

/** Fields every entry point accepts; `userId` and `createdAt` need admin rights (checked in the pipeline). */
export const messageFields = {
  content: z.string().check(z.minLength(1), z.maxLength(config.MESSAGE_MAX_LENGTH)),
  parent_id: z.nullish(z.number().check(z.int(), z.positive())),
  attachments: z.optional(attachmentsSchema),
  clientMessageId: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_CLIENT_MESSAGE_ID_LENGTH))),
  userId: z.optional(idSchema),
  createdAt: z.optional(createdAtSchema),
};

/** `POST /messages` and WebSocket `type: message`: the room is in the body. */
export const messageWithRoomSchema = z.strictObject({ roomId: idSchema, ...messageFields });
/** `POST /rooms/{roomId}/messages`: the room is in the path. */
export const roomMessageSchema = z.strictObject(messageFields);
/** One import row: `userId` required (imports speak for someone). */
export const importRowSchema = z.strictObject({ roomId: idSchema, ...messageFields, userId: idSchema });

export type MessageInput = z.infer<typeof roomMessageSchema> & { roomId: string };
