import { MAX_DIGEST_USERS } from '#domain/digest/run';
import { UNSUBSCRIBE_TOKEN_PATTERN } from '#domain/digest/unsubscribe-link';
import * as z from '#shared/schema';

/** Every field optional (a PATCH); any other field is refused. `email: null` forgets the address. */
export const preferencesPatch = z.strictObject({
  enabled: z.optional(z.boolean()),
  email: z.optional(z.nullable(z.email().check(z.maxLength(254)))),
  inAppEnabled: z.optional(z.boolean()),
  webPushEnabled: z.optional(z.boolean()),
  emailEnabled: z.optional(z.boolean()),
});

export const runDigestBody = z.strictObject({
  digestDate: z.iso.date(),
  maxUsers: z._default(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_DIGEST_USERS)), 10_000),
});

export const unsubscribeQuery = z.object({
  token: z.string().check(z.regex(UNSUBSCRIBE_TOKEN_PATTERN, "must be the token of a digest e-mail's unsubscribe link")),
});
