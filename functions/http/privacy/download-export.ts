import { downloadExportPart } from '#domain/privacy/export';
import { httpHandler, jsonAttachment } from '#edge/http';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.strictObject({
  token: z.string().check(z.minLength(1), z.maxLength(2048)),
  part: queryInt(0, 999_999),
});

export const handler = httpHandler('DownloadSubjectExport', { query }, async ({ query }) => {
  const part = await downloadExportPart(query.token, query.part);
  return jsonAttachment(part.text, part.filename);
});
