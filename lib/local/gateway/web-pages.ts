import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { etagMatches, type ServedScript } from '#shared/etag';
import { PAGE_SECURITY_HEADERS } from '../../page-security-headers';
import { bundleBrowserScript } from '../../web-bundle';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A page's HTML and the one script it loads, as the local gateway serves them. */
export interface PageFiles {
  readonly html: string;
  readonly script: { readonly path: string; readonly entry: string };
}

/** The demo page at `/`, the console at `/console/` (its static build is `npm run build:console`). */
export const WEB_PAGES: Readonly<Record<'/' | '/console/', PageFiles>> = {
  '/': { html: 'web/demo/index.html', script: { path: '/demo.js', entry: 'web/demo/demo.ts' } },
  '/console/': { html: 'web/console/index.html', script: { path: '/console/console.js', entry: 'web/console/console.ts' } },
};

/** What the demo page links to: the repository's docs, as plain text (no Markdown renderer on this side). */
const docs: Readonly<Record<string, string>> = {
  '/docs/api.md': 'docs/api.md',
  '/docs/operations.md': 'docs/operations.md',
  '/docs/architecture.md': 'docs/architecture.md',
  '/docs/console.md': 'docs/console.md',
  '/docs/sdk.md': 'sdk/README.md',
};

export interface WebPages {
  /** Serves the request when it is one of the pages, their scripts or the docs they link; false otherwise. */
  serve(
    request: IncomingMessage,
    response: ServerResponse,
    target: { readonly method: string; readonly pathname: string },
  ): Promise<boolean>;
}

/**
 * The local runtime's browser pages (never deployed: no route of the wiring table). Their scripts
 * are bundled once, starting when the gateway starts, so the first visit does not wait on esbuild
 * and a bundling error shows in the log at start.
 */
export function webPages(): WebPages {
  const bundles = new Map<string, Promise<ServedScript>>();
  for (const page of Object.values(WEB_PAGES)) {
    const bundle = bundleBrowserScript(page.script.entry);
    bundle.catch((error) => console.error(`Could not bundle ${page.script.entry}:`, error));
    bundles.set(page.script.path, bundle);
  }
  return {
    async serve(request, response, { method, pathname }) {
      if (method !== 'GET' && method !== 'HEAD') return false;
      if (pathname === '/console' || pathname === '/console/index.html') {
        response.writeHead(301, { location: '/console/' });
        response.end();
        return true;
      }
      const page = (WEB_PAGES as Readonly<Record<string, PageFiles>>)[pathname === '/index.html' ? '/' : pathname];
      if (page) {
        const html = await readFile(join(repoRoot, page.html));
        send(
          response,
          method,
          200,
          { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...PAGE_SECURITY_HEADERS },
          html,
        );
        return true;
      }
      const bundle = bundles.get(pathname);
      if (bundle) {
        const { code, etag } = await bundle;
        if (etagMatches(request.headers['if-none-match'], etag)) {
          response.writeHead(304, { etag });
          response.end();
          return true;
        }
        send(response, method, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', etag }, code);
        return true;
      }
      const doc = docs[pathname];
      if (doc) {
        send(
          response,
          method,
          200,
          { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' },
          await readFile(join(repoRoot, doc)),
        );
        return true;
      }
      return false;
    },
  };
}

function send(response: ServerResponse, method: string, status: number, headers: Record<string, string>, body: string | Buffer): void {
  response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  response.end(method === 'HEAD' ? undefined : body);
}
