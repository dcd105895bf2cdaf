/**
 * `npm run build:console [-- <folder>]`: the project console as static files a site can host
 * (`index.html` and `console.js`, default folder `dist/console/`). The page asks for the API base URL
 * at sign-in (it offers its own origin), and the API answers browsers of the origins its
 * `corsAllowOrigins` allows (every one by default), so the folder works from a static host of its own. On AWS the stacks
 * host the same files behind the edge distribution at `/console/` (lib/constructs/chat-console-site.ts).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEB_PAGES } from '../lib/local/gateway/web-pages';
import { bundleBrowserScript } from '../lib/web-bundle';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const folder = resolve(process.argv[2] ?? join('dist', 'console'));
const page = WEB_PAGES['/console/'];
const { code } = await bundleBrowserScript(page.script.entry);
mkdirSync(folder, { recursive: true });
copyFileSync(join(repoRoot, page.html), join(folder, 'index.html'));
writeFileSync(join(folder, 'console.js'), code);
console.log(`Console written to ${folder} (index.html, console.js: ${(code.length / 1024).toFixed(1)} KB)`);
