import { sendVoiceMessage } from '#domain/attachments/voice';
import { MAX_CLIENT_MESSAGE_ID_LENGTH } from '#domain/messages/message-input';
import { created, httpHandler, parsePart } from '#edge/http';
import { readUploadBody } from '#edge/upload-body';
import { config } from '#shared/config';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/** The message's fields: query parameters with a raw body, or form fields beside the multipart file (same names). */
const voiceFields = z.strictObject({
  roomId: z.optional(idSchema),
  durationMs: z.optional(z.coerce.number().check(z.int(), z.positive(), z.maximum(config.VOICE_MAX_DURATION_MS))),
  caption: z.optional(z.string().check(z.minLength(1), z.maxLength(config.MESSAGE_MAX_LENGTH))),
  clientMessageId: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_CLIENT_MESSAGE_ID_LENGTH))),
  filename: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
});

export const handler = httpHandler('SendVoiceMessage', { query: voiceFields, rawBody: true }, async (request) => {
  const file = await readUploadBody(request.headers, request.rawBody, {
    maxBytes: config.ATTACHMENTS_MAX_BYTES,
    filename: request.query.filename,
  });
  const fields = { ...request.query, ...parsePart(voiceFields, file.fields, 'body') };
  // Where the caller would put it: a form field beside a multipart file, else the query.
  const fromForm = request.query.roomId === undefined && /^multipart\//i.test(request.headers['content-type'] ?? '');
  const roomId = parsePart(idSchema, fields.roomId, fromForm ? 'body.roomId' : 'query.roomId');
  const { message, upload } = await sendVoiceMessage(
    request.user,
    {
      roomId,
      audio: file,
      ...(fields.durationMs === undefined ? {} : { durationMs: fields.durationMs }),
      ...(fields.caption === undefined ? {} : { caption: fields.caption }),
      ...(fields.clientMessageId === undefined ? {} : { clientMessageId: fields.clientMessageId }),
    },
    request.sourceIp,
  );
  return created({ message, attachment: { url: upload.url, contentType: upload.contentType, size: upload.size } });
});
