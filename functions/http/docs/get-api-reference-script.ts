import { httpHandler } from '#edge/http';
import { servedFile } from '#edge/served-file';
import { httpRoute } from '#wiring';

const scriptFile = httpRoute('GetApiReferenceScript').builtFile?.file ?? 'scalar.js';

/** The file changes only with the package's version, which a deploy ships: a day, then a 304. */
const CACHE_CONTROL = 'public, max-age=86400';

/** Scalar's browser bundle for `/docs`, from the installed package (about 4.3 MB, under Lambda's 6 MB answer), never a CDN. */
export const handler = httpHandler('GetApiReferenceScript', {}, (request) =>
  servedFile(scriptFile, request.headers['if-none-match'], {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': CACHE_CONTROL,
    'x-content-type-options': 'nosniff',
  }),
);
