import { randomBytes } from 'node:crypto';
import * as z from '#shared/schema';

/** Project ids: what API keys (`ck_<projectId>_...`) and webhook ids embed, and keys begin with. */
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** Ids that may appear inside keys: no `#`, bounded length. */
export const idSchema = z
  .string()
  .check(z.minLength(1), z.maxLength(128), z.regex(/^[A-Za-z0-9_.:@-]+$/, 'must be 1-128 characters of letters, digits and _ . : @ -'));

/** A short random id with a readable prefix, e.g. `room_3k9x...`. */
export function newId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url').replace(/[-_]/g, 'x')}`;
}
