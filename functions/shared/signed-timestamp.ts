/**
 * The replay window of signed requests: a timestamp the signature covers (our webhook deliveries'
 * `X-Service-Timestamp`, Slack's and Discord's request timestamps) is accepted only within a window
 * of the receiver's clock, either way. An old one is a captured request sent again; one from the
 * future would stay replayable for longer than the window.
 */

/** Unix seconds as signed headers carry them: digits only, so `1e3`, ` 12` or `-5` never pass for a time. */
const UNIX_SECONDS = /^\d{1,12}$/;

export type SignedTimestampVerdict = 'fresh' | 'malformed' | 'stale';

export function signedTimestampVerdict(
  timestamp: string | undefined,
  windowSeconds: number,
  nowSeconds: number = Date.now() / 1000,
): SignedTimestampVerdict {
  if (timestamp === undefined || !UNIX_SECONDS.test(timestamp)) return 'malformed';
  return Math.abs(nowSeconds - Number(timestamp)) <= windowSeconds ? 'fresh' : 'stale';
}
