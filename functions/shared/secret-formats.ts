import type { SecretId } from '#lib/bindings';
import * as z from '#shared/schema';

/**
 * What each secret must look like; a value that does not is refused where it is read (and by the
 * local runtime at start), naming the secret, instead of failing later in a cipher or a comparison.
 */
export const secretFormats = {
  'operator-key': z.string().check(z.minLength(16, 'must be at least 16 characters')),
  'webhook-key': z
    .string()
    .check(
      z.refine(
        (value) => /^[0-9a-fA-F]{64}$/.test(value) || (/^[A-Za-z0-9+/_-]{43}=?$/.test(value) && Buffer.from(value, 'base64').length === 32),
        'must be 32 bytes given as 64 hex characters or 43 base64 characters',
      ),
    ),
  'fcm-legacy-key': z.string().check(z.minLength(1), z.maxLength(4096), z.regex(/^\S+$/, 'must be one key without spaces')),
  'ai-key': z.string().check(z.minLength(1), z.maxLength(4096), z.regex(/^\S+$/, 'must be one key without spaces')),
} as const satisfies Record<SecretId, z.ZodMiniType<string>>;

/** Throws, naming the secret, unless `value` has the secret's format. */
export function checkSecretFormat(secretId: SecretId, value: string): string {
  const parsed = secretFormats[secretId].safeParse(value);
  if (!parsed.success) throw new Error(`The secret ${secretId} ${parsed.error.issues[0]?.message ?? 'is malformed'}`);
  return parsed.data;
}
