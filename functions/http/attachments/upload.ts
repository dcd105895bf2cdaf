import { storeUpload } from '#domain/attachments/files';
import { created, httpHandler } from '#edge/http';
import { readUploadBody } from '#edge/upload-body';
import { config } from '#shared/config';
import * as z from '#shared/schema';

/** A raw body's name (a multipart file part names itself). */
const query = z.strictObject({ filename: z.optional(z.string().check(z.minLength(1), z.maxLength(255))) });

export const handler = httpHandler('UploadAttachment', { query, rawBody: true }, async ({ query, headers, rawBody, user }) => {
  const file = await readUploadBody(headers, rawBody, { maxBytes: config.ATTACHMENTS_MAX_BYTES, filename: query.filename });
  const stored = await storeUpload(user, file);
  return created({ url: stored.url, path: stored.path, contentType: stored.contentType, size: stored.size, filename: stored.filename });
});
