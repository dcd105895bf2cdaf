import { attachmentLocation } from '#domain/attachments/links';
import { httpHandler } from '#edge/http';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

/** The segments `/upload` makes: a project id, two 128-bit base64url values and a sanitized file name. */
const params = z.object({
  projectId: z.string().check(z.regex(PROJECT_ID_PATTERN)),
  ownerRef: z.string().check(z.regex(/^[A-Za-z0-9_-]{22}$/)),
  objectId: z.string().check(z.regex(/^[A-Za-z0-9_-]{22}$/)),
  filename: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)),
});

export const handler = httpHandler('GetAttachment', { params }, async ({ params }) => {
  const { url, maxAgeSeconds } = await attachmentLocation(params);
  return {
    status: 302,
    headers: { location: url, 'cache-control': `private, max-age=${maxAgeSeconds}`, 'x-content-type-options': 'nosniff' },
  };
});
