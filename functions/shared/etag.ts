import { createHash } from 'node:crypto';

/** A strong `ETag` (quoted) of a text: the same bytes give the same validator in every instance, on AWS and locally. */
export function strongEtag(text: string): string {
  return `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
}
