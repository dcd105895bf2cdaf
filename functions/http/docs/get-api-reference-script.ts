import { httpHandler } from '#edge/http';
import { etagMatches } from '#shared/etag';
import { readWebBundle } from '#shared/web-bundles';
import { httpRoute } from '#wiring';

const scriptFile = httpRoute('GetApiReferenceScript').builtFile?.file ?? 'scalar.js';

/** The file changes only with the package's version, which a deploy ships: a day, then a 304. */
const CACHE_CONTROL = 'public, max-age=86400';

/** Scalar's browser bundle for `/docs`, from the installed package (about 4.3 MB, under Lambda's 6 MB answer), never a CDN. */
export const handler = httpHandler('GetApiReferenceScript', {}, async (request) => {
  const { code, etag } = await readWebBundle(scriptFile);
  const headers = {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': CACHE_CONTROL,
    etag,
    'x-content-type-options': 'nosniff',
  };
  if (etagMatches(request.headers['if-none-match'], etag)) return { status: 304, text: '', headers };
  return { status: 200, text: code, headers };
});
