import type { HttpResult } from '#edge/http';
import { etagMatches } from '#shared/etag';
import { readWebBundle } from '#shared/web-bundles';

/**
 * A file shipped with the function (a browser bundle or a built file, `readWebBundle`) as a cacheable
 * answer: `headers` plus its strong `ETag`, and a bodiless 304 when the client's `If-None-Match`
 * already names it.
 */
export async function servedFile(file: string, ifNoneMatch: string | undefined, headers: Record<string, string>): Promise<HttpResult> {
  const { code, etag } = await readWebBundle(file);
  const answered = { ...headers, etag };
  if (etagMatches(ifNoneMatch, etag)) return { status: 304, text: '', headers: answered };
  return { status: 200, text: code, headers: answered };
}
