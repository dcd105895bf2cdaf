import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes } from '#wiring';
import { runtime } from '../support/api';
import { launchBrowser } from '../support/browser';
import { routeAreas } from '../support/matrices/areas';

/**
 * `/docs` in headless Chromium under the page's own Content-Security-Policy: Scalar (served by
 * `/docs/scalar.js`, never a CDN) must render the document's operations without a single policy
 * violation and without asking any other origin for anything.
 */

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('the API reference page', () => {
  it('renders the routes of the wiring table under the strict page policy, talking to its own origin only', async () => {
    const page = await (await browser.newContext()).newPage();
    const violations: string[] = [];
    const pageErrors: string[] = [];
    const foreignRequests: string[] = [];
    const origin = new URL(runtime().baseUrl).origin;
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) foreignRequests.push(url);
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`Refused to load: ${event.violatedDirective} ${event.blockedURI}`);
      });
    });

    const answer = await page.goto(`${runtime().baseUrl}/docs`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");

    // The first operation of the table is shown open, and every area is a tag of the sidebar: both prove it read the whole document.
    const firstSummary = httpRoutes[0]?.summary as string;
    await page.getByText(firstSummary, { exact: false }).first().waitFor({ timeout: 30_000 });
    for (const area of routeAreas) await page.getByText(area.id, { exact: true }).first().waitFor({ timeout: 5_000 });

    // Scalar's bundled zod probes whether it may compile validators (`try { Function('') } catch {}`)
    // and falls back to interpreting them when the policy says no: that probe is the one refusal
    // allowed, so the page keeps `script-src 'self'` without 'unsafe-eval'.
    expect(violations.filter((violation) => violation !== 'Refused to load: script-src eval')).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  }, 60_000);
});
