import { httpHandler } from '#edge/http';
import { etagMatches } from '#shared/etag';
import { readWebBundle } from '#shared/web-bundles';
import { httpRoute } from '#wiring';

const documentFile = httpRoute('GetOpenApi').builtFile?.file ?? 'openapi.json';

/** As the embed script: a deploy reaches every reader within five minutes, and a revalidation is a bodiless 304. */
const CACHE_CONTROL = 'public, max-age=300';

/**
 * The OpenAPI document, generated at synth (or at local start) from the wiring table and the routes'
 * schemas and shipped beside this code: the function loads no other handler to answer. Its `servers`
 * entry is relative (`/`), so the document describes whichever base URL served it.
 */
export const handler = httpHandler('GetOpenApi', {}, async (request) => {
  const { code, etag } = await readWebBundle(documentFile);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': CACHE_CONTROL,
    etag,
    // Any site's tooling (an API client, another reference page) may fetch it.
    'access-control-allow-origin': '*',
  };
  if (etagMatches(request.headers['if-none-match'], etag)) return { status: 304, text: '', headers };
  return { status: 200, text: code, headers };
});
