/**
 * C0 and C1 controls, DEL and whitespace, which may not appear in a URL (RFC 3986) and which the
 * WHATWG parser would quietly strip or percent-encode, so a stored URL would not be the one given;
 * bidirectional controls, which RFC 3987 bars from IRIs because they make a link read as another;
 * and lone surrogates (`\p{Cs}` under the `u` flag matches only unpaired ones), which have no UTF-8
 * form and so name no resource.
 */
const FORBIDDEN_CHARACTERS = /[\p{Cc}\p{White_Space}\p{Bidi_Control}\p{Cs}\uFEFF]/u;

/** An absolute URL taken from a client, or `undefined` when unparsable or holding a character no URL may hold. */
export function parseClientUrl(value: string): URL | undefined {
  if (FORBIDDEN_CHARACTERS.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** {@link parseClientUrl} for http and https only. */
export function parseHttpUrl(value: string): URL | undefined {
  const url = parseClientUrl(value);
  return url?.protocol === 'http:' || url?.protocol === 'https:' ? url : undefined;
}

/** True for a VAPID `sub` the push services accept: a `mailto:` address or an `https:` URL. */
export function isVapidSubject(value: string): boolean {
  const prefix = ['mailto:', 'https://'].find((candidate) => value.startsWith(candidate));
  // `web-push` parses the subject as a URL before signing; refusing it in the settings keeps that failure at start.
  return prefix !== undefined && value.length > prefix.length && URL.canParse(value);
}
