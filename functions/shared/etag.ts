import { createHash } from 'node:crypto';

/** A script as it is served: its text and the strong validator of its bytes. */
export interface ServedScript {
  readonly code: string;
  /** A strong `ETag` of `code` (quoted). */
  readonly etag: string;
}

/** A strong `ETag` (quoted) of a text: the same bytes give the same validator in every instance, on AWS and locally. */
export function strongEtag(text: string): string {
  return `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
}

/** Whether an `If-None-Match` list names this strong validator (weak ones compare equal too, per RFC 9110). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}
