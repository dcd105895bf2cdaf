import { httpHandler } from '#edge/http';
import { servedFile } from '#edge/served-file';
import { httpRoute } from '#wiring';

const documentFile = httpRoute('GetOpenApi').builtFile?.file ?? 'openapi.json';

/** As the embed script: a deploy reaches every reader within five minutes, and a revalidation is a bodiless 304. */
const CACHE_CONTROL = 'public, max-age=300';

/**
 * The OpenAPI document, generated at synth (or at local start) from the wiring table and the routes'
 * schemas and shipped beside this code: the function loads no other handler to answer. Its `servers`
 * entry is relative (`/`), so the document describes whichever base URL served it.
 */
export const handler = httpHandler('GetOpenApi', {}, (request) =>
  servedFile(documentFile, request.headers['if-none-match'], {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': CACHE_CONTROL,
    // Any site's tooling (an API client, another reference page) may fetch it.
    'access-control-allow-origin': '*',
  }),
);
