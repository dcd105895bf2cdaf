import { timingSafeEqual } from 'node:crypto';

/**
 * Two strings compared in time that does not depend on where they differ (a length difference
 * shows, which a secret's fixed length makes harmless). Its own module, free of dependencies, so
 * that pure modules (`#shared/pusher-protocol`) take it without `#shared/auth`'s.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
