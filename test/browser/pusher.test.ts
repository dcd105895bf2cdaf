import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newGroupRoom, newUser, runtime } from '../support/api';
import { launchBrowser } from '../support/browser';
import { createPusherApp, type PusherAppKeys } from '../support/pusher';

/**
 * pusher-js's browser build (dist/web, as a site loads it from a CDN), unchanged, in headless
 * Chromium: two users of one room, each in a browser context of their own on a page of the
 * runtime's origin, so pusher-js's XHR to `/auth/channel` is same-origin. The tests share the two
 * clients and run in order: Alice subscribes first, Bob joins after. test/e2e/pusher-protocol.test.ts
 * covers the protocol in depth with pusher-js's Node build.
 */

const pusherBrowserBuild = createRequire(import.meta.url).resolve('pusher-js/dist/web/pusher.min.js');

let browser: Browser;
let app: PusherAppKeys;
let alice: { userId: string; token: string };
let bob: { userId: string; token: string };
let roomId: string;
let foreignRoomId: string;
let alicePage: Page;
let bobPage: Page;

interface Seen {
  readonly channel: string;
  readonly event: string;
  readonly data: any;
}

/** In the page: `window.seen` gets every event of every channel subscribed through `subscribe`. */
interface PageGlobals {
  Pusher: new (key: string, options: unknown) => any;
  client: any;
  seen: Seen[];
}

/** Opens a page of the runtime's origin in a fresh context, loads pusher-js there and connects it with the user's token. */
async function connectedPage(token: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  // A JSON answer of the API: it sends no Content-Security-Policy, so the script tag pusher-js comes in is allowed.
  await page.goto(`${runtime().baseUrl}/health`);
  await page.addScriptTag({ path: pusherBrowserBuild });
  const { hostname, port } = new URL(runtime().baseUrl);
  const state = await page.evaluate(
    ({ key, wsHost, wsPort, token }) => {
      const page = globalThis as unknown as PageGlobals;
      page.seen = [];
      page.client = new page.Pusher(key, {
        cluster: 'local',
        wsHost,
        wsPort,
        forceTLS: false,
        enabledTransports: ['ws'],
        disableStats: true,
        channelAuthorization: { endpoint: '/auth/channel', transport: 'ajax', headers: { Authorization: `Bearer ${token}` } },
      });
      return new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve(page.client.connection.state), 10_000);
        page.client.connection.bind('connected', () => {
          clearTimeout(timer);
          resolve('connected');
        });
      });
    },
    { key: app.key, wsHost: hostname, wsPort: Number(port), token },
  );
  expect(state).toBe('connected');
  return page;
}

/** Subscribes in the page and answers `pusher:subscription_succeeded`'s data (a presence channel's members as plain data) or the error. */
function subscribe(page: Page, channel: string): Promise<{ succeeded?: any; error?: any }> {
  return page.evaluate((name) => {
    const page = globalThis as unknown as PageGlobals;
    const subscription = page.client.subscribe(name);
    subscription.bind_global((event: string, data: unknown) => page.seen.push({ channel: name, event, data }));
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ error: 'no answer within 10 s' }), 10_000);
      subscription.bind('pusher:subscription_succeeded', (data: any) => {
        clearTimeout(timer);
        resolve({ succeeded: data?.members ? { count: data.count, me: data.me, members: { ...data.members } } : (data ?? {}) });
      });
      subscription.bind('pusher:subscription_error', (error: unknown) => {
        clearTimeout(timer);
        resolve({ error });
      });
    });
  }, channel);
}

/** The data of the first `event` on `channel` the page has seen, polled until it arrives. */
async function seenBy(page: Page, channel: string, event: string): Promise<any> {
  const find = () =>
    page.evaluate(
      ({ channel, event }) =>
        (globalThis as unknown as PageGlobals).seen.find((seen) => seen.channel === channel && seen.event === event) ?? null,
      { channel, event },
    );
  await expect.poll(find, { timeout: 10_000 }).not.toBeNull();
  return (await find())?.data;
}

beforeAll(async () => {
  const project = await createTestProject('pusher-browser');
  app = await createPusherApp(project.apiKey);
  [alice, bob] = await Promise.all([newUser(project, 'alice'), newUser(project, 'bob')]);
  roomId = `room-${alice.userId}`;
  const created = await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', members: [bob.userId] } });
  expect(created.status).toBe(201);
  // Owned by someone else, with neither Alice nor Bob in it.
  foreignRoomId = (await newGroupRoom(project)).roomId;
  browser = await launchBrowser();
  [alicePage, bobPage] = await Promise.all([connectedPage(alice.token), connectedPage(bob.token)]);
});

afterAll(async () => {
  await browser?.close();
});

describe('pusher-js in headless Chromium', () => {
  it('subscribes to the private and the presence channel of a room, and receives POST /messages as `message`', async () => {
    // Prepare
    const privateChannel = await subscribe(alicePage, `private-room-${roomId}`);
    const presenceChannel = await subscribe(alicePage, `presence-room-${roomId}`);

    // Act
    const posted = await api('/messages', { token: bob.token, body: { roomId, content: 'hello browser' } });

    // Assess
    expect(privateChannel).toEqual({ succeeded: {} });
    expect(presenceChannel.succeeded).toMatchObject({ count: 1, me: { id: alice.userId } });
    expect(posted.status).toBe(201);
    expect(await seenBy(alicePage, `private-room-${roomId}`, 'message')).toMatchObject({
      id: posted.body.id,
      roomId,
      userId: bob.userId,
      content: 'hello browser',
    });
    expect(await alicePage.evaluate(() => (globalThis as unknown as PageGlobals).client.connection.socket_id)).toMatch(/^\d+\.\d+$/);
  });

  it('announces the second browser to the first with pusher:member_added', async () => {
    const joined = await subscribe(bobPage, `presence-room-${roomId}`);

    expect(joined.succeeded).toMatchObject({ count: 2, me: { id: bob.userId } });
    expect(Object.keys(joined.succeeded.members).sort()).toEqual([alice.userId, bob.userId].sort());
    expect(await seenBy(alicePage, `presence-room-${roomId}`, 'pusher:member_added')).toMatchObject({ id: bob.userId });
  });

  it("relays one browser's client event to the other", async () => {
    // Prepare
    expect(await subscribe(bobPage, `private-room-${roomId}`)).toEqual({ succeeded: {} });

    // Act
    const triggered = await alicePage.evaluate(
      (channel) => (globalThis as unknown as PageGlobals).client.channel(channel).trigger('client-typing', { typing: true }),
      `private-room-${roomId}`,
    );

    // Assess
    expect(triggered).toBe(true);
    expect(await seenBy(bobPage, `private-room-${roomId}`, 'client-typing')).toEqual({ typing: true });
  });

  it('is refused the channel of a room the user is not a member of, with a 403', async () => {
    const refused = await subscribe(alicePage, `private-room-${foreignRoomId}`);

    expect(refused.succeeded).toBeUndefined();
    expect(refused.error).toMatchObject({ type: 'AuthError', status: 403 });
  });
});
