import { httpHandler } from '#edge/http';
import { PAGE_SECURITY_HEADERS } from '#shared/page-security-headers';

/**
 * Scalar reads its settings from the `#api-reference` element: a JSON script element is data, never
 * run, so the page needs no inline script and keeps the strict policy of the service's other pages.
 * No default fonts (they come from Scalar's CDN) and no telemetry: the page talks to this origin only.
 */
const configuration = JSON.stringify({ withDefaultFonts: false, telemetry: false, hideClientButton: false });

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>API reference</title>
  </head>
  <body>
    <script id="api-reference" type="application/json" data-url="/openapi.json" data-configuration='${configuration}'></script>
    <script src="/docs/scalar.js"></script>
  </body>
</html>
`;

/** The API reference page over `/openapi.json`, with Scalar's script served by `/docs/scalar.js`. */
export const handler = httpHandler('GetApiReference', {}, async () => ({
  status: 200,
  text: PAGE,
  headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300', ...PAGE_SECURITY_HEADERS },
}));
