/**
 * Real-browser tests (test/browser/): Debian's Chromium driven by playwright-core. `.ci/run`
 * installs the `chromium` package when it is missing; `CHROMIUM_PATH` points elsewhere.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type AxeCore from 'axe-core';
import { type Browser, chromium, type Page } from 'playwright-core';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where screenshots land: a CI job keeps this folder as its artifacts. */
export const ARTIFACTS_DIR = join(repoRoot, 'test-artifacts');

/**
 * Headless Chromium. The network flags keep it from dialling Google's hosts at start (this machine's
 * closed network refuses them, many at a time); `--no-sandbox` because CI runs as root.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Saves a full-page screenshot as `test-artifacts/screenshots/<name>.png` and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  const dir = join(ARTIFACTS_DIR, 'screenshots');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: string[];
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2.1 A and AA rules) in the page, into open shadow roots, and answers the
 * violations of impact `serious` or `critical`. `context` is an axe context, such as a selector.
 */
export async function seriousAxeViolations(page: Page, context: string = 'html'): Promise<AxeViolation[]> {
  // Evaluated rather than added as a script tag: a page with a strict CSP (the widget's host page) refuses inline scripts.
  await page.evaluate(axeSource);
  const violations: AxeViolation[] = await page.evaluate(async (selector) => {
    const { axe } = globalThis as unknown as { axe: typeof AxeCore };
    const result = await axe.run(selector, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node) => JSON.stringify(node.target)),
    }));
  }, context);
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
