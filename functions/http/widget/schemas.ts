import { isSiteOrigin, MAX_ALLOWED_ORIGINS } from '#domain/widget/settings';
import { idSchema, PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

/** Schemas of the embed widget's routes. */

const siteOrigin = z
  .string()
  .check(
    z.refine(
      isSiteOrigin,
      'must be an origin as browsers send it: https://host[:port] in lower case, without path or trailing slash (http only for localhost and 127.0.0.1)',
    ),
  );

export const widgetSettingsBody = z.strictObject({
  allowedOrigins: z.pipe(
    z.array(siteOrigin).check(z.maxLength(MAX_ALLOWED_ORIGINS)),
    z.transform((origins: string[]) => [...new Set(origins)]),
  ),
  supportRoomId: z.nullable(idSchema),
});

export const guestSessionBody = z.strictObject({
  projectId: z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id')),
  /** A room id, or `support` for the project's support room. */
  roomId: z.optional(idSchema),
  name: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(64))),
});
