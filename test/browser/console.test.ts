import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, runtime, type TestProject, uniqueId } from '../support/api';
import { launchBrowser, saveScreenshot, seriousAxeViolations } from '../support/browser';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The project console at `/console/` of the local runtime, signed in with a project's API key: a
 * webhook delivery to a receiver that answers 500 ends `failed` (the shared runtime scales the retry
 * waits down, test/support/global-setup.ts), the console highlights it and its replay button makes
 * it pending again; a flag switched in the console is what `GET /admin/feature-flags` then answers.
 */

interface Delivery {
  readonly id: string;
  readonly webhookId: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempt_count: number;
}

let browser: Browser;
let page: Page;
let project: TestProject;
let receiver: WebhookReceiver;
let failed: Delivery;
let roomId: string;

const deliveries = async () => {
  const listed = await api<{ deliveries: Delivery[] }>('/admin/webhooks/deliveries?limit=100', { apiKey: project.apiKey });
  if (listed.status !== 200) throw new Error(`listing deliveries failed: ${listed.status}`);
  return listed.body.deliveries;
};

beforeAll(async () => {
  project = await createTestProject('console');
  receiver = await startWebhookReceiver({ behaviour: 'error' });
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: receiver.url, eventTypes: ['message.created'] },
  });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  roomId = uniqueId('room');
  await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type: 'public', name: 'Lobby' } });
  const posted = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { userId: 'alice', content: 'hello webhooks' } });
  if (posted.status !== 201) throw new Error(`message failed: ${posted.status} ${JSON.stringify(posted.body)}`);
  failed = await eventually(
    'the delivery to end failed',
    async () => (await deliveries()).find((delivery) => delivery.webhookId === registered.body.id && delivery.status === 'failed'),
    30_000,
    200,
  );
  browser = await launchBrowser();
  // The console's CSP refuses inline scripts, and axe-core is injected as one.
  page = await (await browser.newContext({ bypassCSP: true })).newPage();
  page.setDefaultTimeout(10_000);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

describe('the console, signed in with the API key', () => {
  it('signs in from /console with the key', async () => {
    await page.goto(`${runtime().baseUrl}/console`);
    expect(await page.getByLabel('API base URL').inputValue()).toBe(runtime().baseUrl);
    await page.getByLabel('API key or admin token').fill(project.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console pages' }).waitFor();
    // Kept for this tab only, never in localStorage.
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem('chat-console-session'))).toContain(project.apiKey);
  });

  it('lists the failed delivery, highlighted, with a replay button', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const row = page.locator(`tr[data-delivery-id="${failed.id}"]`);
    await row.waitFor();
    expect(await row.getAttribute('class')).toBe('failed');
    expect(await row.locator('.status').innerText()).toBe('failed');
    expect(await row.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(253, 232, 232)');
    expect(await page.getByText(/\d+ recent deliver(y|ies), 1 failed\./).count()).toBe(1);
    await row.getByRole('button', { name: `Replay delivery ${failed.id}` }).waitFor();
  });

  it('has no serious accessibility violations on the webhooks page, and leaves a screenshot', async () => {
    expect(await seriousAxeViolations(page)).toEqual([]);
    await saveScreenshot(page, 'console');
  });

  it('makes the delivery pending again with the replay button, on the page and through the API', async () => {
    // The replayed attempt then waits on the receiver (until WEBHOOK_TIMEOUT_MS), so the delivery stays pending long enough to look at.
    receiver.behaviour = 'hang';
    const requestsBefore = receiver.requests.length;
    await page.getByRole('button', { name: `Replay delivery ${failed.id}` }).click();
    const row = page.locator(`tr[data-delivery-id="${failed.id}"]`);
    await page.locator(`tr[data-delivery-id="${failed.id}"][data-status="pending"]`).waitFor();
    expect(await row.getAttribute('class')).toBe('');
    expect(await row.locator('.status').innerText()).toBe('pending');
    expect(await row.getByRole('button', { name: /Replay/ }).count()).toBe(0);
    const throughApi = (await deliveries()).find((delivery) => delivery.id === failed.id);
    expect(throughApi?.status).toBe('pending');
    await receiver.waitForRequests(requestsBefore + 1);
  });

  it('switches a flag off, which GET /admin/feature-flags and the project users then see', async () => {
    await page.getByRole('link', { name: 'Feature flags' }).click();
    const flag = page.getByRole('switch', { name: 'voice_messages' });
    await flag.waitFor();
    expect(await flag.isChecked()).toBe(true);
    await flag.click();
    await page.getByText('voice_messages is now off for this project.').waitFor();
    expect(await flag.isChecked()).toBe(false);
    const overrides = await api('/admin/feature-flags', { apiKey: project.apiKey });
    expect(overrides.body).toEqual({ overrides: { voice_messages: false } });
    const asUser = await api('/client/feature-flags', { token: await project.token('alice') });
    expect(asUser.body.flags.voice_messages).toBe(false);
    expect(await seriousAxeViolations(page)).toEqual([]);
  });
});

describe('the other pages of the console', () => {
  it('shows a room with its messages, live, and adds a member with a role', async () => {
    await page.getByRole('link', { name: 'Rooms' }).click();
    await page.getByRole('button', { name: 'Lobby' }).click();
    const messages = page.getByRole('list', { name: `Messages in ${roomId}` });
    await messages.getByText('hello webhooks').waitFor();
    await page.getByLabel('User id').fill('carol');
    await page.getByLabel('Role').selectOption('guest');
    await page.getByRole('button', { name: 'Add or change' }).click();
    const carol = page.getByRole('table', { name: 'Members' }).getByRole('row').filter({ hasText: 'carol' });
    await carol.waitFor();
    expect(await carol.getByRole('cell').nth(1).innerText()).toBe('guest');
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members).toContainEqual(expect.objectContaining({ userId: 'carol', role: 'guest' }));
    await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { userId: 'bob', content: 'a later message' } });
    await messages.getByText('a later message').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('saves the block list and a canned response through the API', async () => {
    await page.getByRole('link', { name: 'Block list' }).click();
    await page.getByLabel('Blocked terms, one a line').fill('Spam\nscam');
    await page.getByRole('button', { name: 'Save the block list' }).click();
    await page.getByText(/^2 terms, last changed/).waitFor();
    expect((await api('/admin/moderation/blocklist', { apiKey: project.apiKey })).body.terms).toEqual(['spam', 'scam']);

    await page.getByRole('link', { name: 'Support' }).click();
    await page.getByLabel('Title').fill('Greeting');
    await page.getByLabel('Content').fill('Hello, how can we help?');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('table', { name: 'Canned responses' }).getByText('Hello, how can we help?').waitFor();
    const listed = await api('/support/canned-responses', { apiKey: project.apiKey });
    expect(listed.body.responses).toMatchObject([{ title: 'Greeting', content: 'Hello, how can we help?' }]);
    expect(await seriousAxeViolations(page)).toEqual([]);
  });
});

describe('the static build (npm run build:console)', () => {
  let folder: string;
  let site: Server;
  let siteUrl: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'console-build-'));
    await promisify(execFile)('npx', ['tsx', 'bin/build-console.ts', folder]);
    // A static host on another origin than the API: it serves the two files and nothing else.
    const files: Record<string, [string, string]> = {
      '/': ['index.html', 'text/html; charset=utf-8'],
      '/console.js': ['console.js', 'text/javascript; charset=utf-8'],
    };
    site = createServer((request, response) => {
      const file = files[request.url ?? ''];
      if (!file) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': file[1] }).end(readFileSync(join(folder, file[0])));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => site?.close(resolve));
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('signs in from another origin with the API base URL typed in, and reads the project', async () => {
    const hosted = await page.context().newPage();
    hosted.setDefaultTimeout(10_000);
    await hosted.goto(siteUrl);
    // It offers its own origin, which is not the API here.
    expect(await hosted.getByLabel('API base URL').inputValue()).toBe(siteUrl.replace(/\/$/, ''));
    await hosted.getByLabel('API base URL').fill(runtime().baseUrl);
    await hosted.getByLabel('API key or admin token').fill(project.apiKey);
    await hosted.getByRole('button', { name: 'Sign in' }).click();
    await hosted.getByRole('link', { name: 'Feature flags' }).click();
    const flag = hosted.getByRole('switch', { name: 'voice_messages' });
    await flag.waitFor();
    expect(await flag.isChecked()).toBe(false);
    await hosted.close();
  });
});
