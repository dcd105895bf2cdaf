import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newGroupRoom, runtime, type TestProject } from '../support/api';
import { launchBrowser, saveScreenshot, seriousAxeViolations } from '../support/browser';
import { type Shop, startShop } from '../support/widget-shop';
import { connect, type RoomSocket } from '../support/ws';

/**
 * The embed widget in headless Chromium, on a shop page of another origin (test/support/widget-shop.ts)
 * that sends the strict Content-Security-Policy docs/widget.md asks of a site and a
 * hostile stylesheet: the widget opens, gets a guest session, sends and receives, shows typing and
 * presence, falls back to SSE and then polling when the browser blocks the WebSocket and the
 * stream, and stays off the page when the flag is off or the site's origin is not allowed.
 */

let browser: Browser;
let shop: Shop;

beforeAll(async () => {
  shop = await startShop(runtime().baseUrl);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
});

/** A project whose widget may run on the shop, with its support room (owned by a project user). */
async function widgetProject(name: string, allowedOrigins = () => [shop.origin]) {
  const project = await createTestProject(name);
  const { owner, roomId } = await newGroupRoom(project);
  const settings = await api('/admin/widget', {
    apiKey: project.apiKey,
    method: 'PUT',
    body: { allowedOrigins: allowedOrigins(), supportRoomId: roomId },
  });
  expect(settings.status).toBe(200);
  return { project, owner, roomId };
}

/** A fresh browser context (its own storage), with the CSP violations of its pages recorded. */
async function openShop(project: TestProject, options: { blockWebSocket?: boolean; blockStream?: boolean; scriptQuery?: string } = {}) {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    const recorded: string[] = [];
    (globalThis as unknown as { cspViolations: string[] }).cspViolations = recorded;
    document.addEventListener('securitypolicyviolation', (event) => recorded.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  if (options.blockWebSocket) {
    // As a proxy or an extension that refuses WebSockets would: the constructor fails.
    await context.addInitScript(() => {
      (globalThis as unknown as { WebSocket: unknown }).WebSocket = class {
        constructor() {
          throw new DOMException('WebSockets are blocked here', 'SecurityError');
        }
      };
    });
  }
  if (options.blockStream) await context.route(/\/rooms\/[^/?]+\/stream(\?|$)/, (route) => route.abort('blockedbyclient'));
  const page = await context.newPage();
  await page.goto(shop.pageUrl({ projectId: project.projectId, scriptQuery: options.scriptQuery }));
  return { context, page };
}

const launcherOf = (page: Page) => page.getByRole('button', { name: /chat/i });
const panelIn = (page: Page, state: string) => page.locator(`#chat-panel[data-state="${state}"]`);

/** Waits until the room's history (read with the API key) holds a message with this content. */
async function storedMessage(project: TestProject, roomId: string, content: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const read = await api(`/rooms/${roomId}/messages?limit=50`, { apiKey: project.apiKey });
    const found = (read.body?.messages ?? []).find((message: { content: string }) => message.content === content);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`"${content}" was not stored: ${JSON.stringify(read.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('GET /embed.js', () => {
  it('answers the widget as JavaScript with a validator, and 304 to a client that has it', async () => {
    // Act
    const first = await fetch(`${runtime().baseUrl}/embed.js`);
    const code = await first.text();
    const etag = first.headers.get('etag') ?? '';
    const again = await fetch(`${runtime().baseUrl}/embed.js`, { headers: { 'if-none-match': `W/"other", ${etag}` } });

    // Assess
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(code).toContain('chat-widget:ready');
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('answers 403 feature_disabled for a project whose embed_widget is off, and 400 for a malformed project id', async () => {
    // Prepare
    const project = await createTestProject('widget-flag-route');
    await api('/admin/feature-flags', { apiKey: project.apiKey, method: 'PUT', body: { overrides: { embed_widget: false } } });

    // Act
    const off = await api(`/embed.js?projectId=${project.projectId}`);
    const malformed = await api('/embed.js?projectId=no%20such%20id!');

    // Assess
    expect(off.status).toBe(403);
    expect(off.body.error.code).toBe('feature_disabled');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('validation_failed');
  });
});

describe('the embed widget on a site of another origin', () => {
  let contexts: BrowserContext[] = [];
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    contexts = [];
  });

  it('opens a guest session, sends and receives over the WebSocket, shows typing and presence, under a strict CSP and hostile CSS', async () => {
    // Prepare
    const { project, owner, roomId } = await widgetProject('widget-chat');
    const { context, page } = await openShop(project);
    contexts.push(context);
    const guestAnswer = page.waitForResponse((response) => response.url().endsWith('/auth/guest'));

    // Act: open, send
    await launcherOf(page).click();
    await panelIn(page, 'connected').waitFor();
    const guest = await (await guestAnswer).json();
    const textbox = page.getByRole('textbox', { name: 'Message' });
    await textbox.fill('Do you ship to Norway?');
    await textbox.press('Enter');
    const stored = await storedMessage(project, roomId, 'Do you ship to Norway?');

    // Act: a project user answers, typing first, on a socket of the room
    const agent: RoomSocket = await connect(roomId, owner.token);
    await page.getByText('2 online').waitFor();
    agent.send({ type: 'client-typing', data: { typing: true } });
    await page.getByText('Someone is typing…').waitFor();
    await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { content: 'We do, in three days.' } });
    await page.getByText('We do, in three days.').waitFor();
    await textbox.fill('Gr');
    const guestTyping = await agent.next((frame) => frame.type === 'event' && frame.event === 'client-typing');
    const handoff = await api(`/rooms/${roomId}/handoff`, { apiKey: project.apiKey, body: {} });
    await page.getByText('A person from our team has joined the conversation.').waitFor();

    // Assess
    expect(guest.userId).toMatch(/^guest_/);
    expect(stored.userId).toBe(guest.userId);
    expect(guestTyping).toMatchObject({ userId: guest.userId, data: { typing: true } });
    expect(handoff.status).toBe(201);
    const reply = page.locator('.message:not(.own)').last();
    const color = await reply.evaluate((element) => getComputedStyle(element).color);
    expect(color).toBe('rgb(31, 35, 40)');
    expect(await page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
    expect(await seriousAxeViolations(page, '[data-chat-widget]')).toEqual([]);
    await saveScreenshot(page, 'widget-open');

    // Act and assess: Escape closes the panel and gives the focus back to the launcher
    await textbox.press('Escape');
    await page.locator('#chat-panel').waitFor({ state: 'hidden' });
    expect(await page.evaluate(() => document.querySelector('[data-chat-widget]')?.shadowRoot?.activeElement?.className)).toBe('launcher');
    await agent.close();
  });

  it("shows the assistant typing before an AI agent's answer in the room, and the answer after it", async () => {
    // Prepare: an agent of the project (the shared runtime's model server answers at once)
    const { project, owner, roomId } = await widgetProject('widget-agent');
    const created = await api('/agents', {
      apiKey: project.apiKey,
      body: { handle: 'shop-helper', name: 'Shop helper', instructions: 'You answer questions about the shop.' },
    });
    expect(created.status).toBe(201);
    const { context, page } = await openShop(project);
    contexts.push(context);
    await launcherOf(page).click();
    await panelIn(page, 'connected').waitFor();
    // The indicator shows for as long as the model works, which may be a few milliseconds: record
    // every text it takes rather than race to see it.
    await page.evaluate(() => {
      const indicator = document.querySelector('[data-chat-widget]')?.shadowRoot?.querySelector('.typing');
      if (!indicator) throw new Error('the widget has no typing indicator');
      const seen: string[] = [];
      (globalThis as unknown as { typingSeen: string[] }).typingSeen = seen;
      new MutationObserver(() => seen.push(indicator.textContent ?? '')).observe(indicator, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });

    // Act
    const invoked = await api(`/agents/${created.body.id}/invoke`, {
      token: owner.token,
      body: { roomId, prompt: 'Do you ship to Norway?' },
    });
    await page.locator('.message:not(.own)').last().waitFor();

    // Assess: typing on, then the answer, then off
    expect(invoked.status).toBe(201);
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as { typingSeen: string[] }).typingSeen))
      .toEqual(expect.arrayContaining(['The assistant is typing…', '']));
    const seen = await page.evaluate(() => (globalThis as unknown as { typingSeen: string[] }).typingSeen);
    expect(seen[0]).toBe('The assistant is typing…');
    await expect.poll(() => page.locator('.typing').textContent()).toBe('');
    await page.getByText(invoked.body.message.content).waitFor();
  });

  it('falls back to SSE when the browser blocks the WebSocket, and to polling when it blocks the stream too, still receiving', async () => {
    // Prepare
    const { project, owner, roomId } = await widgetProject('widget-fallback');
    const sse = await openShop(project, { blockWebSocket: true });
    const polling = await openShop(project, { blockWebSocket: true, blockStream: true });
    contexts.push(sse.context, polling.context);

    // Act
    await launcherOf(sse.page).click();
    await launcherOf(polling.page).click();
    await panelIn(sse.page, 'sse').waitFor();
    await panelIn(polling.page, 'polling').waitFor();
    await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { content: 'Anyone there?' } });
    const textbox = polling.page.getByRole('textbox', { name: 'Message' });
    await textbox.fill('Polling here');
    await textbox.press('Enter');

    // Assess
    await sse.page.getByText('Anyone there?').waitFor();
    await polling.page.getByText('Anyone there?').waitFor();
    await storedMessage(project, roomId, 'Polling here');
    await sse.page.getByText('Polling here').waitFor();
  });

  it('shows nothing when embed_widget is off: the script answers 403, and a cached script takes itself off at the refused session', async () => {
    // Prepare
    const { project } = await widgetProject('widget-flag-off');
    await api('/admin/feature-flags', { apiKey: project.apiKey, method: 'PUT', body: { overrides: { embed_widget: false } } });

    // Act
    const withProject = await openShop(project, { scriptQuery: `?projectId=${project.projectId}` });
    const plain = await openShop(project);
    contexts.push(withProject.context, plain.context);
    await launcherOf(plain.page).click();

    // Assess
    expect(await withProject.page.locator('[data-chat-widget]').count()).toBe(0);
    await plain.page.waitForFunction(() => document.querySelector('[data-chat-widget]') === null);
  });

  it('shows nothing on a site whose origin the project did not allow', async () => {
    // Prepare
    const { project } = await widgetProject('widget-origin', () => ['https://shop.example.com']);
    const { context, page } = await openShop(project);
    contexts.push(context);

    // Act
    await launcherOf(page).click();

    // Assess
    await page.waitForFunction(() => document.querySelector('[data-chat-widget]') === null);
  });

  it("gives the guest a token that gets 403 on the room's e2e key", async () => {
    // Prepare
    const { project, roomId } = await widgetProject('widget-e2e');
    const { context, page } = await openShop(project);
    contexts.push(context);
    const guestAnswer = page.waitForResponse((response) => response.url().endsWith('/auth/guest'));
    await launcherOf(page).click();
    const guest = await (await guestAnswer).json();

    // Act: from the shop's origin, which the token is bound to, so the refusal is the e2e rule's alone
    const e2e = await api(`/rooms/${roomId}/e2e-key`, { token: guest.token, headers: { origin: shop.origin } });
    const history = await api(`/rooms/${roomId}/messages`, { token: guest.token, headers: { origin: shop.origin } });

    // Assess
    expect({ status: e2e.status, code: e2e.body?.error?.code }).toEqual({ status: 403, code: 'guest_forbidden' });
    expect(history.status).toBe(200);
  });
});
