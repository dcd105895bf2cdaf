/**
 * Section 15: the embed widget. `GET /embed.js` as the local runtime serves it (the bytes CDK ships),
 * raw and compressed; then, in headless Chromium on a shop page of another origin with the strict
 * CSP of docs/widget.md (test/support/widget-shop.ts), the time from the script's request to the
 * widget's launcher on the page (`chat-widget-ready` mark), and from the guest session's request
 * (the launcher clicked) to the first message of the room shown. Each page load is a fresh browser
 * context, so nothing is cached.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/support/browser';
import { startShop } from '../test/support/widget-shop';
import { type Bench, fmt, GOALS, table } from './harness';
import { createProject, median, round } from './util';

/** Page loads per figure. */
const RUNS = Number(process.env.BENCH_WIDGET_RUNS) > 0 ? Number(process.env.BENCH_WIDGET_RUNS) : 10;

const GREETING = 'Hello! How can we help?';

type WidgetFigures = {
  rawBytes: number;
  gzipBytes: number;
  brotliBytes: number;
  runs: number;
  readyMs: number[];
  firstMessageMs: number[];
};

/** One page load: script request → ready, then click → guest session request → first message shown. */
async function loadOnce(browser: Browser, url: string): Promise<{ readyMs: number; firstMessageMs: number }> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url);
    // No named functions inside: tsx would wrap them in a helper the page does not have.
    await page.waitForFunction(() => performance.getEntriesByName('chat-widget-ready').length > 0, undefined, { polling: 'raf' });
    const readyMs = await page.evaluate(
      () =>
        (performance.getEntriesByName('chat-widget-ready')[0]?.startTime ?? 0) -
        (performance.getEntriesByType('resource').find((entry) => entry.name.includes('/embed.js'))?.startTime ?? 0),
    );
    await page.getByRole('button', { name: /chat/i }).click();
    const shownAt = await page.waitForFunction(
      (text) => {
        const root = document.querySelector('[data-chat-widget]')?.shadowRoot;
        const shown = Array.from(root?.querySelectorAll('.message') ?? []).some((item) => item.textContent?.includes(text));
        return shown ? performance.now() : false;
      },
      GREETING,
      { polling: 'raf', timeout: 15_000 },
    );
    const shownMs = (await shownAt.jsonValue()) as number;
    const guestRequestAt = await page.evaluate(
      () => performance.getEntriesByType('resource').find((entry) => entry.name.endsWith('/auth/guest'))?.startTime ?? Number.NaN,
    );
    return { readyMs, firstMessageMs: shownMs - guestRequestAt };
  } finally {
    await context.close();
  }
}

export const widget: Bench<WidgetFigures> = {
  id: 'widget',
  name: 'embed widget',
  needs: 'service',
  async run({ service, log }) {
    const { api, runtime } = service;
    // The WebSocket's welcome (its `history` frame) is the realtime worker's, a queue consumer.
    runtime.startConsumers();
    const served = await fetch(`${runtime.baseUrl}/embed.js`);
    const code = Buffer.from(await served.arrayBuffer());
    const sizes = { rawBytes: code.length, gzipBytes: gzipSync(code).length, brotliBytes: brotliCompressSync(code).length };
    log(`   embed.js: ${sizes.rawBytes} B raw, ${sizes.gzipBytes} B gzip, ${sizes.brotliBytes} B brotli`);

    const shop = await startShop(runtime.baseUrl);
    const browser = await launchBrowser();
    try {
      const project = await createProject(api, 'bench-widget');
      const owner = await project.token('bench-support');
      const roomId = `support-${Date.now()}`;
      await api.expect(201, '/rooms', { token: owner, body: { id: roomId, type: 'group' } });
      await api.expect(201, `/rooms/${roomId}/messages`, { token: owner, body: { content: GREETING } });
      await api.expect(200, '/admin/widget', {
        apiKey: project.apiKey,
        method: 'PUT',
        body: { allowedOrigins: [shop.origin], supportRoomId: roomId },
      });
      const url = shop.pageUrl({ projectId: project.projectId });
      // A first load outside the figures: Chromium's own start-up and the handlers' first imports.
      await loadOnce(browser, url);
      const readyMs: number[] = [];
      const firstMessageMs: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const figures = await loadOnce(browser, url);
        readyMs.push(round(figures.readyMs, 1));
        firstMessageMs.push(round(figures.firstMessageMs, 1));
      }
      log(`   ready ${median(readyMs)} ms, first message ${median(firstMessageMs)} ms (medians of ${RUNS})`);
      return { ...sizes, runs: RUNS, readyMs, firstMessageMs };
    } finally {
      await browser.close();
      await shop.close();
    }
  },

  goals: ({ gzipBytes, readyMs }) => [
    {
      id: 'widget.gzip',
      name: '`embed.js` gzipped',
      target: `≤ ${GOALS.widgetGzipKiB} KiB`,
      measured: `${fmt(gzipBytes / 1024)} KiB`,
      pass: gzipBytes <= GOALS.widgetGzipKiB * 1024,
    },
    {
      id: 'widget.ready',
      name: 'Script request to widget ready, headless Chromium (median)',
      target: `≤ ${GOALS.widgetReadyMs} ms`,
      measured: `${fmt(median(readyMs), 0)} ms`,
      pass: median(readyMs) <= GOALS.widgetReadyMs,
    },
  ],

  section: ({ rawBytes, gzipBytes, brotliBytes, runs, readyMs, firstMessageMs }) => `## Embed widget

\`GET /embed.js\` as the local runtime serves it: the bundle of \`web/widget/\` and the SDK, built by the esbuild CDK uses
(\`lib/web-bundle.ts\`; minified IIFE). Goal: at most ${GOALS.widgetGzipKiB} KiB gzipped.

${table('Encoding | Bytes | KiB', [
  ['raw', rawBytes, fmt(rawBytes / 1024)],
  ['gzip (level 6)', gzipBytes, fmt(gzipBytes / 1024)],
  ['brotli (level 11)', brotliBytes, fmt(brotliBytes / 1024)],
])}

In headless Chromium, on a shop page of another origin served with the strict CSP of [docs/widget.md](widget.md), each of
${runs} loads in a fresh browser context (nothing cached): **ready** is from the request of \`embed.js\` to the
launcher on the page (the widget's \`chat-widget-ready\` performance mark); **first message** is from the request of
\`POST /auth/guest\` (the launcher clicked) to the room's last message shown in the panel: the guest session, the
flags read, the WebSocket opened and its \`history\` frame. Goal: ready within ${GOALS.widgetReadyMs} ms locally.

${table('What | Median (ms) | Min (ms) | Max (ms)', [
  ['script request → widget ready', fmt(median(readyMs)), fmt(Math.min(...readyMs)), fmt(Math.max(...readyMs))],
  [
    'guest session request → first message shown',
    fmt(median(firstMessageMs)),
    fmt(Math.min(...firstMessageMs)),
    fmt(Math.max(...firstMessageMs)),
  ],
])}`,
};
