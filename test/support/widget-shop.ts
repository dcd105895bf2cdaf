/**
 * A shop's web site on another origin than the API, for the embed widget (test/browser/widget.test.ts,
 * bench/widget.ts): one page with the widget's tag, sent with the strict Content-Security-Policy
 * docs/widget.md asks of a site, and a hostile stylesheet. Listens on loopback, port 0.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Rules a careless or hostile site may have; none of them may reach into the widget's shadow root. */
export const HOSTILE_CSS = `
* { display: block !important; color: transparent !important; font-size: 3px !important; }
div { visibility: hidden !important; position: static !important; opacity: 0 !important; }
button, input, ol, li { display: none !important; }
`;

/** The CSP of docs/widget.md for an API at `apiBaseUrl`: scripts and connections to the API, nothing inline, no styles but the site's own. */
export function strictCsp(apiBaseUrl: string): string {
  const api = new URL(apiBaseUrl);
  const ws = api.protocol === 'https:' ? 'wss:' : 'ws:';
  return [
    "default-src 'none'",
    `script-src ${api.origin}`,
    `connect-src ${api.origin} ${ws}//${api.host}`,
    "style-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export interface ShopPage {
  readonly projectId: string;
  /** @default 'support' */
  readonly room?: string;
  /** Appended to the script's `src` (`?projectId=...`). */
  readonly scriptQuery?: string;
}

export interface Shop {
  readonly origin: string;
  /** The URL of the page embedding the widget as `page` says. */
  pageUrl(page: ShopPage): string;
  close(): Promise<void>;
}

function pageHtml(apiBaseUrl: string, query: URLSearchParams): string {
  const attribute = (value: string) => value.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  const src = `${apiBaseUrl}/embed.js${query.get('scriptQuery') ?? ''}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title><link rel="stylesheet" href="/hostile.css"></head>
<body><main><h1>Shop</h1><p>Things for sale.</p></main>
<script src="${attribute(src)}" data-project="${attribute(query.get('project') ?? '')}" data-room="${attribute(query.get('room') ?? 'support')}" async></script>
</body></html>`;
}

export async function startShop(apiBaseUrl: string): Promise<Shop> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://shop');
    if (url.pathname === '/hostile.css') {
      response.writeHead(200, { 'content-type': 'text/css' }).end(HOSTILE_CSS);
      return;
    }
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': strictCsp(apiBaseUrl) })
      .end(pageHtml(apiBaseUrl, url.searchParams));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    pageUrl: (page) => {
      const query = new URLSearchParams({ project: page.projectId, room: page.room ?? 'support' });
      if (page.scriptQuery) query.set('scriptQuery', page.scriptQuery);
      return `${origin}/?${query}`;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
