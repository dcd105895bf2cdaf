import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes } from '#wiring';
import { api, runtime, uniqueId } from '../support/api';
import { launchBrowser, saveScreenshot, seriousAxeViolations } from '../support/browser';

/**
 * The demo page at `/` of the local runtime, in two browser contexts (two visitors, no shared
 * storage): each signs in through the page, joins the same room, and sees the other online, typing
 * and talking.
 */

let browser: Browser;
const alice = uniqueId('alice');
const bob = uniqueId('bob');
const roomId = uniqueId('demo-room');
let alicePage: Page;
let bobPage: Page;

/**
 * Opens the demo page in a fresh context and joins `roomId` as `name`, up to the WebSocket. Bob's
 * context keeps the page's Content-Security-Policy, so the page is shown to work under it; Alice's
 * bypasses it, because axe-core is injected as an inline script, which that policy refuses.
 */
async function joinAs(name: string, options: { bypassCSP: boolean }): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage();
  await page.goto(`${runtime().baseUrl}/`);
  await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('textbox', { name: 'Room', exact: true }).fill(roomId);
  await page.getByRole('button', { name: 'Join', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'connected (WebSocket)' }).waitFor();
  return page;
}

const online = (page: Page) => page.getByRole('list', { name: 'Online' });

beforeAll(async () => {
  browser = await launchBrowser();
  alicePage = await joinAs(alice, { bypassCSP: true });
  bobPage = await joinAs(bob, { bypassCSP: false });
});
afterAll(async () => {
  await browser?.close();
});

describe('the demo page, two visitors in one room', () => {
  it('shows each visitor the other online', async () => {
    await expect.poll(() => online(alicePage).innerText()).toContain(bob);
    await expect.poll(() => online(bobPage).innerText()).toContain(alice);
    expect(await online(alicePage).innerText()).toContain(`${alice} (you)`);
  });

  it("shows the other's typing, and clears it when the message arrives", async () => {
    await bobPage.getByRole('textbox', { name: 'Message', exact: true }).pressSequentially('hel');
    await expect.poll(() => alicePage.locator('#typing').innerText()).toBe(`${bob} is typing…`);
    await bobPage.getByRole('textbox', { name: 'Message', exact: true }).pressSequentially('lo from bob');
    await bobPage.getByRole('button', { name: 'Send' }).click();
    const received = alicePage.getByRole('list', { name: 'Messages' }).getByRole('listitem').filter({ hasText: 'hello from bob' });
    await received.waitFor();
    expect(await received.locator('.author').innerText()).toBe(bob);
    await expect.poll(() => alicePage.locator('#typing').innerText()).toBe('');
  });

  it("delivers each visitor's messages to the other", async () => {
    await alicePage.getByRole('textbox', { name: 'Message', exact: true }).fill('hi bob, alice here');
    await alicePage.getByRole('textbox', { name: 'Message', exact: true }).press('Enter');
    const atBob = bobPage.getByRole('list', { name: 'Messages' }).getByRole('listitem').filter({ hasText: 'hi bob, alice here' });
    await atBob.waitFor();
    expect(await atBob.locator('.author').innerText()).toBe(alice);
    // Both timelines hold the two messages once each, in the same order.
    const timeline = (page: Page) => page.getByRole('list', { name: 'Messages' }).locator('.content').allInnerTexts();
    await expect.poll(() => timeline(alicePage)).toEqual(['hello from bob', 'hi bob, alice here']);
    expect(await timeline(bobPage)).toEqual(['hello from bob', 'hi bob, alice here']);
  });

  it('has no serious accessibility violations, and leaves a screenshot', async () => {
    expect(await seriousAxeViolations(alicePage)).toEqual([]);
    await saveScreenshot(alicePage, 'demo');
  });
});

describe('the demo sign-in, local only', () => {
  it('mints a member token of the demo project for a name, and refuses a name that is no user id', async () => {
    const refused = await api('/_local/demo/session', { body: { name: 'not a user id' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'body.name' }] });
    const name = uniqueId('carol');
    const issued = await api('/_local/demo/session', { body: { name } });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ projectId: 'demo', userId: name });
    const claims = JSON.parse(Buffer.from(issued.body.token.split('.')[1], 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ projectId: 'demo', userId: name, roles: ['member'] });
    expect((await api('/rooms?scope=public', { token: issued.body.token })).status).toBe(200);
  });

  it('is served by the local gateway alone: no route of the wiring table (what CDK deploys) has these paths', () => {
    const localOnly = httpRoutes.filter(
      (route) => route.path === '/' || route.path.startsWith('/console') || route.path.startsWith('/_local'),
    );
    expect(localOnly).toEqual([]);
  });
});
