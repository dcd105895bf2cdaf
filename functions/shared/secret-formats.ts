import * as z from '#shared/schema';
import { parseKeyRing } from '#shared/sealing';
import type { SecretId } from '#wiring/bindings';

/** A data key secret: one key, or a key ring during a rotation (`functions/shared/sealing.ts`). */
const dataKeyRing = z.string().check(
  z.superRefine((value, context) => {
    try {
      parseKeyRing(value);
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message, input: value });
    }
  }),
);

/**
 * What each secret must look like; a value that does not is refused where it is read (and by the
 * local runtime at start), naming the secret, instead of failing later in a cipher or a comparison.
 */
export const secretFormats = {
  'operator-key': z.string().check(z.minLength(16, 'must be at least 16 characters')),
  'webhook-key': dataKeyRing,
  'signing-key': dataKeyRing,
  'fcm-legacy-key': z.string().check(z.minLength(1), z.maxLength(4096), z.regex(/^\S+$/, 'must be one key without spaces')),
  'ai-key': z.string().check(z.minLength(1), z.maxLength(4096), z.regex(/^\S+$/, 'must be one key without spaces')),
  // LiveKit signs HS256 with the secret's bytes; RFC 7518 asks for a key at least as long as the hash (32 bytes).
  'calls-secret': z
    .string()
    .check(z.minLength(32, 'must be at least 32 characters'), z.maxLength(4096), z.regex(/^\S+$/, 'must be one secret without spaces')),
  // An HMAC-SHA256 key: at least as long as the hash, as for the call server's.
  'marketplace-signing': z
    .string()
    .check(z.minLength(32, 'must be at least 32 characters'), z.maxLength(4096), z.regex(/^\S+$/, 'must be one secret without spaces')),
  // CloudFront sends it as a header value: printable ASCII, no spaces, long enough not to be guessed.
  'origin-verify': z
    .string()
    .check(
      z.minLength(32, 'must be at least 32 characters'),
      z.maxLength(1024),
      z.regex(/^[!-~]+$/, 'must be printable ASCII without spaces'),
    ),
} as const satisfies Record<SecretId, z.ZodMiniType<string>>;

/** Throws, naming the secret, unless `value` has the secret's format. */
export function checkSecretFormat(secretId: SecretId, value: string): string {
  const parsed = secretFormats[secretId].safeParse(value);
  if (!parsed.success) throw new Error(`The secret ${secretId} ${parsed.error.issues[0]?.message ?? 'is malformed'}`);
  return parsed.data;
}
