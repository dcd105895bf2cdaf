import { randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes, type RateLimit } from '#wiring';
import { api, createTestProject, ISO_TIMESTAMP, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { setRateLimitWindows } from '../support/raw-table';
import { freshSourceIp, postFrom } from '../support/source-ip';
import { openSse } from '../support/sse';
import { tryConnect } from '../support/ws';

/**
 * The embed widget's server side over real HTTP and WebSocket: the settings a project embeds it
 * with (`PUT`/`GET /admin/widget`), guest sessions (`POST /auth/guest`) and what a guest token may
 * and may not do, its binding to the site it was issued for, and the per-IP limit.
 */

const SHOP = 'https://shop.example.com';
const OTHER_SITE = 'https://evil.example.net';

let project: TestProject;
let supportRoomId: string;
let publicRoomId: string;
let privateRoomId: string;

/** `POST /auth/guest` from a page of `origin` (`null`: a request no browser made). */
const startGuest = (body: Record<string, unknown>, origin: string | null = SHOP) =>
  api('/auth/guest', { body, headers: origin === null ? {} : { origin } });

async function createRoom(token: string, type: 'group' | 'public') {
  const roomId = uniqueId(type);
  const created = await api('/rooms', { token, body: { id: roomId, type, name: `${type} room` } });
  if (created.status !== 201) throw new Error(`room creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return roomId;
}

beforeAll(async () => {
  project = await createTestProject('widget-guest');
  const agent = await newUser(project, 'agent');
  [supportRoomId, publicRoomId, privateRoomId] = await Promise.all([
    createRoom(agent.token, 'group'),
    createRoom(agent.token, 'public'),
    createRoom(agent.token, 'group'),
  ]);
  const set = await api('/admin/widget', {
    method: 'PUT',
    apiKey: project.apiKey,
    body: { allowedOrigins: [SHOP, 'http://localhost:5173'], supportRoomId },
  });
  if (set.status !== 200) throw new Error(`widget settings failed: ${set.status} ${JSON.stringify(set.body)}`);
});

describe('PUT and GET /admin/widget', () => {
  it('answer an empty allow-list and no support room before anything is set, then what was set', async () => {
    // Prepare
    const fresh = await createTestProject('widget-settings');
    const admin = await newUser(fresh, 'admin', ['admin']);
    const roomId = await createRoom(admin.token, 'public');

    // Act
    const before = await api('/admin/widget', { apiKey: fresh.apiKey });
    const put = await api('/admin/widget', {
      method: 'PUT',
      token: admin.token,
      body: { allowedOrigins: ['https://a.example.com', 'https://b.example.com:8443', 'https://a.example.com'], supportRoomId: roomId },
    });
    const after = await api('/admin/widget', { token: admin.token });

    // Assess
    expect(before).toMatchObject({ status: 200, body: { allowedOrigins: [], supportRoomId: null, updatedAt: null } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      allowedOrigins: ['https://a.example.com', 'https://b.example.com:8443'],
      supportRoomId: roomId,
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(after).toMatchObject({ status: 200, body: put.body });
  });

  it('refuses a support room the project does not have (404) and a dm (400), and keeps the settings', async () => {
    // Prepare
    const alice = await newUser(project, 'alice');
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [uniqueId('bob')] } });

    // Act
    const unknown = await api('/admin/widget', {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { allowedOrigins: [SHOP], supportRoomId: uniqueId('nowhere') },
    });
    const direct = await api('/admin/widget', {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { allowedOrigins: [SHOP], supportRoomId: dm.body.id },
    });

    // Assess
    expect(dm.status).toBe(201);
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    expect(direct).toMatchObject({
      status: 400,
      body: { error: { code: 'validation_failed', details: [{ field: 'body.supportRoomId' }] } },
    });
    expect((await api('/admin/widget', { apiKey: project.apiKey })).body).toMatchObject({
      supportRoomId,
      allowedOrigins: [SHOP, 'http://localhost:5173'],
    });
  });

  it.each([
    ['a path', 'https://shop.example.com/store'],
    ['a trailing slash', 'https://shop.example.com/'],
    ['plain http to a public host', 'http://shop.example.com'],
    ['upper case', 'https://Shop.example.com'],
    ['a default port written out', 'https://shop.example.com:443'],
    ['no scheme', 'shop.example.com'],
    ['the opaque origin of a sandboxed page', 'null'],
    ['credentials', 'https://user@shop.example.com'],
  ])('refuses an origin with %s', async (_, origin) => {
    // Act
    const answer = await api('/admin/widget', {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { allowedOrigins: [origin], supportRoomId: null },
    });

    // Assess
    expect(answer).toMatchObject({
      status: 400,
      body: { error: { code: 'validation_failed', details: [{ field: 'body.allowedOrigins.0' }] } },
    });
  });

  it('accepts http for localhost and 127.0.0.1 only, and at most 20 origins', async () => {
    // Prepare
    const fresh = await createTestProject('widget-limits');
    const twenty = Array.from({ length: 20 }, (_, index) => `https://site-${index}.example.com`);

    // Act
    const loopback = await api('/admin/widget', {
      method: 'PUT',
      apiKey: fresh.apiKey,
      body: { allowedOrigins: ['http://localhost:3000', 'http://127.0.0.1:8080'], supportRoomId: null },
    });
    const atLimit = await api('/admin/widget', {
      method: 'PUT',
      apiKey: fresh.apiKey,
      body: { allowedOrigins: twenty, supportRoomId: null },
    });
    const overLimit = await api('/admin/widget', {
      method: 'PUT',
      apiKey: fresh.apiKey,
      body: { allowedOrigins: [...twenty, 'https://one-more.example.com'], supportRoomId: null },
    });

    // Assess
    expect(loopback.status).toBe(200);
    expect(atLimit.status).toBe(200);
    expect(overLimit).toMatchObject({
      status: 400,
      body: { error: { code: 'validation_failed', details: [{ field: 'body.allowedOrigins' }] } },
    });
  });
});

describe('POST /auth/guest', () => {
  it("issues a short-lived guest token bound to the page's origin, with a user id of its own", async () => {
    // Act
    const started = Date.now();
    const session = await startGuest({ projectId: project.projectId, name: 'Visitor' });

    // Assess
    expect(session.status).toBe(201);
    expect(session.body).toEqual({
      token: expect.any(String),
      userId: expect.stringMatching(/^guest_[A-Za-z0-9]+$/),
      expiresAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    const claims = decodeJwt(session.body.token);
    expect(claims).toMatchObject({
      projectId: project.projectId,
      userId: session.body.userId,
      roles: ['guest'],
      origin: SHOP,
      name: 'Visitor',
    });
    const lifetimeSeconds = (Date.parse(session.body.expiresAt) - started) / 1000;
    expect(lifetimeSeconds).toBeGreaterThan(3590);
    expect(lifetimeSeconds).toBeLessThanOrEqual(3601);
    const other = await startGuest({ projectId: project.projectId });
    expect(other.body.userId).not.toBe(session.body.userId);
  });

  it('refuses a site that is not on the allow-list, and a request with no Origin (403 origin_not_allowed)', async () => {
    // Act
    const unlisted = await startGuest({ projectId: project.projectId }, OTHER_SITE);
    const originless = await startGuest({ projectId: project.projectId }, null);
    const neverSet = await startGuest({ projectId: (await createTestProject('widget-unset')).projectId });

    // Assess
    for (const answer of [unlisted, originless, neverSet]) {
      expect(answer).toMatchObject({ status: 403, body: { error: { code: 'origin_not_allowed' } } });
    }
  });

  it('refuses while embed_widget is off for the project (403 feature_disabled), and an unknown project (404)', async () => {
    // Prepare
    const off = await createTestProject('widget-off');
    await api('/admin/widget', { method: 'PUT', apiKey: off.apiKey, body: { allowedOrigins: [SHOP], supportRoomId: null } });
    await api('/admin/feature-flags', { method: 'PUT', apiKey: off.apiKey, body: { overrides: { embed_widget: false } } });

    // Act
    const disabled = await startGuest({ projectId: off.projectId });
    const unknown = await startGuest({ projectId: `nowhere-${randomBytes(4).toString('hex')}` });

    // Assess
    expect(disabled).toMatchObject({ status: 403, body: { error: { code: 'feature_disabled' } } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'project_not_found' } } });
  });

  it('enters the support room (as `support` or by id) as a room guest, who posts there but never gets the e2e key', async () => {
    // Act
    const byAlias = await startGuest({ projectId: project.projectId, roomId: 'support' });
    const byId = await startGuest({ projectId: project.projectId, roomId: supportRoomId });
    const posted = await api('/messages', {
      token: byAlias.body.token,
      headers: { origin: SHOP },
      body: { roomId: supportRoomId, content: 'I need help' },
    });
    const key = await api(`/rooms/${supportRoomId}/e2e-key`, { token: byAlias.body.token, headers: { origin: SHOP } });
    const members = await api(`/rooms/${supportRoomId}/members`, { apiKey: project.apiKey });

    // Assess
    expect(byAlias).toMatchObject({ status: 201, body: { roomId: supportRoomId } });
    expect(byId).toMatchObject({ status: 201, body: { roomId: supportRoomId } });
    expect(posted.status).toBe(201);
    expect(key).toMatchObject({ status: 403, body: { error: { code: 'guest_forbidden' } } });
    expect(members.body.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ userId: byAlias.body.userId, role: 'guest' }),
        expect.objectContaining({ userId: byId.body.userId, role: 'guest' }),
      ]),
    );
  });

  it('answers 404 support_room_not_set for `support` in a project without a support room', async () => {
    // Prepare
    const bare = await createTestProject('widget-no-support');
    await api('/admin/widget', { method: 'PUT', apiKey: bare.apiKey, body: { allowedOrigins: [SHOP], supportRoomId: null } });

    // Act
    const answer = await startGuest({ projectId: bare.projectId, roomId: 'support' });

    // Assess
    expect(answer).toMatchObject({ status: 404, body: { error: { code: 'support_room_not_set' } } });
  });

  it('joins a public room as a guest, and refuses any other private room, then and later (403)', async () => {
    // Act
    const intoPublic = await startGuest({ projectId: project.projectId, roomId: publicRoomId });
    const intoPrivate = await startGuest({ projectId: project.projectId, roomId: privateRoomId });
    const guest = (await startGuest({ projectId: project.projectId })).body;
    const readPrivate = await api(`/rooms/${privateRoomId}/messages`, { token: guest.token, headers: { origin: SHOP } });
    const postPublic = await api('/messages', {
      token: guest.token,
      headers: { origin: SHOP },
      body: { roomId: publicRoomId, content: 'hi' },
    });

    // Assess
    expect(intoPublic).toMatchObject({ status: 201, body: { roomId: publicRoomId } });
    expect(intoPrivate).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(readPrivate).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(postPublic.status).toBe(201);
    const members = await api(`/rooms/${publicRoomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members).toEqual(
      expect.arrayContaining([expect.objectContaining({ userId: intoPublic.body.userId, role: 'guest' })]),
    );
  });

  it('gives a guest no room creation and no admin route (403 forbidden)', async () => {
    // Prepare
    const guest = (await startGuest({ projectId: project.projectId })).body;
    const asGuest = { token: guest.token, headers: { origin: SHOP } };

    // Act
    const createRoomAnswer = await api('/rooms', { ...asGuest, body: { id: uniqueId('room'), type: 'group' } });
    const settings = await api('/admin/widget', asGuest);
    const setSettings = await api('/admin/widget', {
      ...asGuest,
      method: 'PUT',
      body: { allowedOrigins: [OTHER_SITE], supportRoomId: null },
    });
    const flags = await api('/admin/feature-flags', { ...asGuest, method: 'PUT', body: { overrides: { embed_widget: true } } });

    // Assess
    for (const answer of [createRoomAnswer, settings, setSettings, flags]) {
      expect(answer).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    }
  });
});

describe('a guest token on another site', () => {
  it('is refused on HTTP, polling, SSE and the WebSocket upgrade alike, and works from its own site', async () => {
    // Prepare
    const guest = (await startGuest({ projectId: project.projectId, roomId: publicRoomId })).body;

    // Act
    const http = (origin: string) => api(`/rooms/${publicRoomId}`, { token: guest.token, headers: { origin } });
    const poll = (origin: string) => api(`/rooms/${publicRoomId}/messages?after=0`, { token: guest.token, headers: { origin } });
    const sse = await openSse(`/rooms/${publicRoomId}/stream?token=${guest.token}`, { headers: { origin: OTHER_SITE } });
    const socket = await tryConnect(publicRoomId, guest.token, { origin: OTHER_SITE });
    const ownSocket = await tryConnect(publicRoomId, guest.token, { origin: SHOP });
    const ownSse = await openSse(`/rooms/${publicRoomId}/stream?token=${guest.token}`, { headers: { origin: SHOP } });

    // Assess
    const refused = { status: 403, body: { error: { code: 'origin_not_allowed' } } };
    expect(await http(OTHER_SITE)).toMatchObject(refused);
    expect(await poll(OTHER_SITE)).toMatchObject(refused);
    expect(sse).toMatchObject(refused);
    expect(socket).toMatchObject({ open: false, ...refused });
    expect((await http(SHOP)).status).toBe(200);
    expect((await poll(SHOP)).status).toBe(200);
    expect(ownSocket.open).toBe(true);
    await ownSse.started();
    ownSse.close();
    if (ownSocket.open) ownSocket.socket.close();
  });
});

describe('guest user ids', () => {
  it('cannot be minted by the project (400 reserved_id) nor signed into a member token (401)', async () => {
    // Prepare
    const guest = (await startGuest({ projectId: project.projectId, roomId: 'support' })).body;
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ projectId: project.projectId, userId: guest.userId, ...claims })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(project.signingSecret));

    // Act
    const minted = await api('/auth/token', { apiKey: project.apiKey, body: { userId: guest.userId, roles: ['member'] } });
    const credentials = await api(`/users/${guest.userId}/credentials`, {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { password: 'long-enough' },
    });
    const asMember = await api(`/rooms/${supportRoomId}/messages`, { token: await sign({ roles: ['member'] }) });
    const unbound = await api(`/rooms/${supportRoomId}/messages`, { token: await sign({ roles: ['guest'] }) });

    // Assess
    expect(minted).toMatchObject({ status: 400, body: { error: { code: 'reserved_id' } } });
    expect(credentials).toMatchObject({ status: 400, body: { error: { code: 'reserved_id' } } });
    expect(asMember).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
    expect(unbound).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
  });
});

describe("a guest's data", () => {
  it('is exported for an admin acting for the guest, as anyone else is', async () => {
    // Prepare
    const guest = (await startGuest({ projectId: project.projectId, roomId: 'support' })).body;
    const content = `my order ${uniqueId('order')}`;
    await api('/messages', { token: guest.token, headers: { origin: SHOP }, body: { roomId: supportRoomId, content } });

    // Act
    const minted = await api('/auth/token', {
      apiKey: project.apiKey,
      body: { userId: uniqueId('admin'), roles: ['admin'], sub: guest.userId },
    });
    const exported = await api('/gdpr/export', { token: minted.body.token });

    // Assess
    expect(minted.status).toBe(201);
    expect(exported.status).toBe(200);
    expect((exported.body.messages as any[]).map((message) => message.content)).toEqual([content]);
  });
});

/** `POST /auth/guest` from the page of the shop, leaving from `sourceIp`. */
const startGuestFrom = (sourceIp: string, body: unknown) => postFrom(sourceIp, '/auth/guest', body, { origin: SHOP });

describe('the per-IP limit of POST /auth/guest', () => {
  it('answers 429 with Retry-After once an address has spent its budget, and other addresses go on', async () => {
    // Prepare
    const limit = Number(runtime().env.RATE_LIMIT_GUEST_SESSIONS_PER_IP_PER_MINUTE);
    const ip = freshSourceIp();
    const body = { projectId: project.projectId };
    // The limit counts in fixed minute windows (functions/domain/rate-limit): the address's counters
    // are set a few sessions short of the limit (the limiter's own keys), so that real requests cross
    // it (spending the whole budget one request at a time took about 19 s). The few must not straddle
    // a window's end, where the next counter would miss the first of them: not in a window's last seconds.
    const REAL = 3;
    const intoWindowMs = Date.now() % 60_000;
    if (intoWindowMs > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindowMs + 50));
    const rateLimit = httpRoutes.find((route) => route.id === 'CreateGuestSession')?.rateLimit as RateLimit;
    await setRateLimitWindows('_public', rateLimit.bucket, `ip:${ip}`, limit - REAL);

    // Act
    const within = [];
    for (let count = 0; count < REAL; count++) within.push(await startGuestFrom(ip, body));
    const over = await startGuestFrom(ip, body);
    const elsewhere = await startGuestFrom('127.0.0.1', body);

    // Assess
    expect(within.map((answer) => answer.status)).toEqual(Array(REAL).fill(201));
    expect(over).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    expect(elsewhere.status).toBe(201);
  }, 60_000);
});
