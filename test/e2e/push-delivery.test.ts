import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { type ApnsServer, startApnsServer } from '../support/push/apns-server';
import { type FcmServer, startFcmServer } from '../support/push/fcm-server';
import { type StatusPushService, startStatusPushService, startWebPushTesting, type WebPushTesting } from '../support/push/web-push-service';
import { eventually } from '../support/webhook-receiver';
import { connect, type RoomSocket } from '../support/ws';

/**
 * Pushes after messages, end to end: a runtime of its own (`bin/local.ts`, every consumer on)
 * whose provider base URLs point at local servers speaking the real protocols: web-push-testing
 * (decrypts what it receives), a push service of ours answering chosen statuses, an FCM with its
 * OAuth token endpoint, and an APNs over HTTP/2 with a self-signed certificate trusted through
 * `APNS_EXTRA_CA_PEM` only. Messages go in through the public API; what arrives is checked at the
 * providers.
 */

const OPERATOR_KEY = 'push-delivery-operator-key-0123';
const VAPID_SUBJECT = 'mailto:push-tests@example.com';
const APNS = { teamId: 'TEAM123456', keyId: 'KEY1234567', bundleId: 'com.example.chat' };
const LEGACY_KEY = `legacy-${randomBytes(12).toString('hex')}`;

const serviceAccountKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const apnsKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const serviceAccountJson = JSON.stringify({
  type: 'service_account',
  project_id: 'chat-push-tests',
  client_email: 'sender@chat-push-tests.iam.gserviceaccount.com',
  private_key: serviceAccountKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
});

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let apiKey: string;
let fcm: FcmServer;
let apns: ApnsServer;
let browsers: WebPushTesting;
let statuses: StatusPushService;
const sockets: RoomSocket[] = [];

beforeAll(async () => {
  [fcm, apns, browsers, statuses] = await Promise.all([
    startFcmServer({ serviceAccountPublicKey: serviceAccountKeys.publicKey, legacyKeys: [LEGACY_KEY] }),
    startApnsServer({ ...APNS, publicKey: apnsKeys.publicKey }),
    startWebPushTesting(),
    startStatusPushService(),
  ]);
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
      // Configuration changes reach the next message at once.
      CACHE_TTL_MS: '0',
      // The push warnings (push.web_failed, push.skipped) are what some tests look for.
      POWERTOOLS_LOG_LEVEL: 'WARN',
      VAPID_SUBJECT,
      FCM_BASE_URL: fcm.url,
      GOOGLE_OAUTH_BASE_URL: fcm.url,
      APNS_BASE_URL: apns.url,
      APNS_SANDBOX_BASE_URL: apns.url,
      APNS_EXTRA_CA_PEM: apns.ca,
      // Three deliveries are sent by the dispatcher; more go through the push queue two at a time.
      PUSH_INLINE_RECIPIENTS: '3',
      PUSH_BATCH_SIZE: '2',
    },
  });
  call = clientOf(local.baseUrl);
  apiKey = local.apiKey;
}, 90_000);

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await local?.stop();
  await Promise.all([fcm?.close(), apns?.close(), browsers?.close(), statuses?.close()]);
});

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

async function tokenFor(userId: string, roles?: string[]) {
  const issued = await call('/auth/token', { apiKey, body: { userId, ...(roles ? { roles } : {}) } });
  expect(issued.status).toBe(201);
  return issued.body.token as string;
}

interface User {
  readonly userId: string;
  readonly token: string;
}
async function users(count: number, prefix = 'user'): Promise<User[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const userId = unique(prefix);
      return { userId, token: await tokenFor(userId) };
    }),
  );
}

async function roomOf(members: readonly User[], options: { e2eEnabled?: boolean } = {}) {
  const roomId = unique('room');
  const created = await call('/rooms', {
    apiKey,
    body: { id: roomId, type: 'group', members: members.map((member) => member.userId), ...options },
  });
  expect(created.status).toBe(201);
  return roomId;
}

async function post(author: User, roomId: string, content: string) {
  const sent = await call('/messages', { token: author.token, body: { roomId, content } });
  expect(sent.status).toBe(201);
  return sent.body as { id: number };
}

async function subscribe(user: User, target: { endpoint: string; keys: { p256dh: string; auth: string } }) {
  const subscribed = await call('/push/web/subscribe', {
    token: user.token,
    body: { endpoint: target.endpoint, keys: target.keys, userAgent: 'vitest' },
  });
  expect([200, 201]).toContain(subscribed.status);
  return subscribed.body as { id: string };
}

async function subscriptionsOf(user: User) {
  const listed = await call('/push/web/subscriptions', { token: user.token });
  expect(listed.status).toBe(200);
  return listed.body.subscriptions as { id: string; failureCount: number; active: boolean; lastSentAt: string | null }[];
}

async function devicesOf(user: User) {
  return (await call('/push/devices', { token: user.token })).body.devices as { id: string; token: string }[];
}

async function vapidPublicKey() {
  const answer = await call('/push/web/vapid-public-key', { headers: { 'x-service-project-id': 'demo' } });
  expect(answer.status).toBe(200);
  return answer.body.publicKey as string;
}

async function putConfig(body: Record<string, unknown>) {
  const answer = await call('/push/config', { method: 'PUT', apiKey, body });
  expect([200, 201]).toContain(answer.status);
  return answer.body;
}

/** The runtime's JSON log lines with this message. */
const logLines = (message: string) =>
  local
    .output()
    .split('\n')
    .filter((line) => line.includes(`"${message}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const apnsToken = () => randomBytes(32).toString('hex');
const fcmToken = () => `fcm-${randomBytes(24).toString('base64url')}`;

async function stats() {
  return (await call('/_local/stats')).body as { metrics: Record<string, number> };
}

/** Membership events the push roster subscriber has handled so far (its `push_roster_synced` metric). */
const rosterSyncs = async () => (await stats()).metrics.push_roster_synced ?? 0;

/**
 * A join or a removal reaches the room's push roster through its event, an event's latency after
 * the request: waits until the roster subscriber has handled `count` more membership events than
 * `before`, bounded. Tests of this file run one at a time, so the count is theirs.
 */
const membershipsHandled = (before: number, count: number) =>
  eventually(`${count} membership events handled by push`, async () => (await rosterSyncs()) >= before + count);

/**
 * Waits until no membership event has reached push for a second: an event an earlier test left in
 * flight can make up a count, so a test that needs its own join handled also lets the count settle.
 */
async function rosterSyncsSettled(): Promise<void> {
  let last = await rosterSyncs();
  let since = Date.now();
  await eventually('push roster syncs to settle', async () => {
    const now = await rosterSyncs();
    if (now !== last) [last, since] = [now, Date.now()];
    return Date.now() - since >= 1000;
  });
}

describe('web push after a message', () => {
  it('reaches every subscribed member but the author, decrypted intact, and can be acknowledged by its recipient only', async () => {
    // Arrange
    const [author, reader, other] = await users(3);
    const roomId = await roomOf([author, reader, other] as User[]);
    const publicKey = await vapidPublicKey();
    const readerBrowser = await browsers.subscribe(publicKey);
    const authorBrowser = await browsers.subscribe(publicKey);
    await subscribe(reader as User, readerBrowser);
    await subscribe(author as User, authorBrowser);
    const before = (await stats()).metrics.push_delivered ?? 0;

    // Act
    const message = await post(author as User, roomId, 'hello from the push suite');

    // Assess
    const [received] = await eventually('the reader’s push', async () => {
      const messages = await browsers.notifications(readerBrowser);
      return messages.length > 0 && messages;
    });
    const payload = JSON.parse(received as string);
    expect(payload).toEqual({
      type: 'message',
      pushId: expect.stringMatching(/^push_/),
      projectId: 'demo',
      roomId,
      messageId: message.id,
      userId: author?.userId,
      preview: 'hello from the push suite',
    });
    expect(await browsers.notifications(authorBrowser)).toEqual([]);
    await eventually('lastSentAt on the reader’s subscription', async () => (await subscriptionsOf(reader as User))[0]?.lastSentAt);

    const byOther = await call('/push/delivery-ack', { token: (other as User).token, body: { pushId: payload.pushId } });
    const unknown = await call('/push/delivery-ack', { token: (reader as User).token, body: { pushId: `push_${'x'.repeat(22)}` } });
    const acknowledged = await call('/push/delivery-ack', { token: (reader as User).token, body: { pushId: payload.pushId } });
    const again = await call('/push/delivery-ack', { token: (reader as User).token, body: { pushId: payload.pushId } });
    expect(byOther).toMatchObject({ status: 404, body: { error: { code: 'push_not_found' } } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'push_not_found' } } });
    expect(acknowledged).toMatchObject({ status: 200, body: { pushId: payload.pushId, status: 'delivered', channel: 'web', roomId } });
    expect(again.body.deliveredAt).toBe(acknowledged.body.deliveredAt);
    expect((await stats()).metrics.push_delivered).toBe(before + 1);
  });

  it('signs with VAPID as RFC 8292 says and sends the headers the spec lists', async () => {
    // Arrange
    const [author, reader] = await users(2);
    const roomId = await roomOf([author, reader] as User[]);
    const target = statuses.subscription(201);
    await subscribe(reader as User, target);
    const publicKey = await vapidPublicKey();

    // Act
    const sentAt = Math.floor(Date.now() / 1000);
    await post(author as User, roomId, 'check my headers');

    // Assess
    const request = await eventually('the push', async () => statuses.requests.find((candidate) => candidate.endpoint === target.endpoint));
    expect(request.headers).toMatchObject({
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
      ttl: '60',
      urgency: 'normal',
    });
    const [, jwt, key] = /^vapid t=([^,]+), k=(\S+)$/.exec(String(request.headers.authorization)) ?? [];
    expect(key).toBe(publicKey);
    const point = Buffer.from(publicKey, 'base64url');
    const verificationKey = await importJWK(
      { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') },
      'ES256',
    );
    const { payload } = await jwtVerify(jwt as string, verificationKey, {
      algorithms: ['ES256'],
      audience: new URL(target.endpoint).origin,
    });
    expect(decodeProtectedHeader(jwt as string)).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(payload.sub).toBe(VAPID_SUBJECT);
    expect(payload.exp).toBeGreaterThan(sentAt + 11 * 3600);
    expect(payload.exp).toBeLessThanOrEqual(sentAt + 12 * 3600 + 5);
    // RFC 8188 header: 16-byte salt, record size 4096, then the sender's key.
    expect(request.body.readUInt32BE(16)).toBe(4096);
    expect(request.body[20]).toBe(65);
  });

  it('applies the failure table: 201/202 keep 0, 404/410 delete, 429/4xx/5xx and other answers count, 400-403 log push.config_error', async () => {
    // Arrange
    const [author] = await users(1, 'author');
    const outcomes = [201, 202, 200, 404, 410, 429, 400, 401, 403, 500, 503] as const;
    const members = await users(outcomes.length, 'table');
    const roomId = await roomOf([author as User, ...members]);
    const targets = outcomes.map((status) => statuses.subscription(status));
    await Promise.all(members.map((member, index) => subscribe(member, targets[index] as { endpoint: string; keys: any })));

    // Act
    await post(author as User, roomId, 'one message, ten answers');

    // Assess
    await eventually('every endpoint asked once', async () => targets.every((target) => statuses.requestsTo(target.endpoint) === 1));
    const expected: Record<number, number | 'removed'> = {
      201: 0,
      202: 0,
      // Not the spec's 201 or 202: no push service answers a push with 200.
      200: 1,
      404: 'removed',
      410: 'removed',
      429: 1,
      400: 1,
      401: 1,
      403: 1,
      500: 1,
      503: 1,
    };
    await eventually('every answer applied', async () => {
      const lists = await Promise.all(members.map(subscriptionsOf));
      return outcomes.every((status, index) => {
        const list = lists[index] ?? [];
        return expected[status] === 'removed' ? list.length === 0 : list[0]?.failureCount === expected[status];
      });
    });
    await eventually('push.config_error for 400, 401 and 403', async () => {
      const lines = local
        .output()
        .split('\n')
        .filter((line) => line.includes('"push.config_error"'));
      const logged = lines.map((line) => JSON.parse(line).status).sort();
      return logged.filter((status: number) => [400, 401, 403].includes(status)).length >= 3 && logged;
    });
    const hosts = new Set(targets.map((target) => new URL(target.endpoint).host));
    const webFailed = logLines('push.web_failed').filter((line) => hosts.has(line.host as string));
    expect(webFailed.map((line) => line.status).sort()).toEqual([200, 429, 500, 503]);
  });

  it('resets the count to 0 on the next 201 after failures', async () => {
    // Arrange
    const [author, reader] = await users(2);
    const roomId = await roomOf([author, reader] as User[]);
    const target = statuses.subscription(500);
    await subscribe(reader as User, target);
    await post(author as User, roomId, 'fails');
    await eventually('one failure counted', async () => (await subscriptionsOf(reader as User))[0]?.failureCount === 1);

    // Act
    statuses.setStatus(target.endpoint, 201);
    await post(author as User, roomId, 'arrives');

    // Assess
    await eventually('the count back at 0', async () => {
      const [subscription] = await subscriptionsOf(reader as User);
      return subscription?.failureCount === 0 && subscription.lastSentAt !== null;
    });
  });

  it('keeps at most 10 subscriptions per user: the 11th replaces the oldest', async () => {
    // Arrange
    const [reader] = await users(1);
    const targets = Array.from({ length: 11 }, () => statuses.subscription(201));

    // Act
    const ids: string[] = [];
    for (const target of targets) ids.push((await subscribe(reader as User, target)).id);

    // Assess
    const listed = (await subscriptionsOf(reader as User)).map((subscription) => subscription.id);
    expect(listed).toHaveLength(10);
    expect(listed).not.toContain(ids[0]);
    expect(listed.sort()).toEqual(ids.slice(1).sort());
  });

  it('skips a subscription at 10 failures until the user unsubscribes and subscribes again, which starts it at 0', async () => {
    // Arrange
    const [author, failing, sentinel] = await users(3);
    const roomId = await roomOf([author, failing, sentinel] as User[]);
    const broken = statuses.subscription(500);
    const working = statuses.subscription(201);
    await subscribe(failing as User, broken);
    await subscribe(sentinel as User, working);

    // Act: ten failures close the gate
    for (let sent = 1; sent <= 10; sent++) {
      await post(author as User, roomId, `failure ${sent}`);
      await eventually(
        `push ${sent}`,
        async () => statuses.requestsTo(broken.endpoint) === sent && statuses.requestsTo(working.endpoint) === sent,
      );
    }
    await eventually('the gate closed', async () => (await subscriptionsOf(failing as User))[0]?.active === false);
    const [closed] = await subscriptionsOf(failing as User);
    await post(author as User, roomId, 'after the gate');
    await eventually('the sentinel got the 11th', async () => statuses.requestsTo(working.endpoint) === 11);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const skipped = statuses.requestsTo(broken.endpoint);

    statuses.setStatus(broken.endpoint, 201);
    const body = { endpoint: broken.endpoint, keys: broken.keys };
    const postedAgain = await call('/push/web/subscribe', { token: (failing as User).token, body });
    const unsubscribed = await call(`/push/web/subscribe/${closed?.id}`, { method: 'DELETE', token: (failing as User).token });
    const resubscribed = await call('/push/web/subscribe', { token: (failing as User).token, body });
    await post(author as User, roomId, 'after subscribing again');

    // Assess
    expect(closed?.failureCount).toBe(10);
    expect(skipped).toBe(10);
    // Posting the same subscription again (as browsers do on every load) does not reopen the gate...
    expect(postedAgain).toMatchObject({ status: 200, body: { failureCount: 10, active: false } });
    // ...unsubscribing and subscribing again does.
    expect(unsubscribed.status).toBe(204);
    expect(resubscribed).toMatchObject({ status: 201, body: { failureCount: 0, active: true } });
    await eventually('the reopened subscription used', async () => statuses.requestsTo(broken.endpoint) === 11);
    await eventually('its count back at 0', async () => (await subscriptionsOf(failing as User))[0]?.lastSentAt);
  });

  it('sends a large room through queued batches, every member once', async () => {
    // Arrange: seven recipients, more than PUSH_INLINE_RECIPIENTS (3): four batches of two
    const [author] = await users(1, 'author');
    const members = await users(7, 'crowd');
    const roomId = await roomOf([author as User, ...members]);
    const targets = members.map(() => statuses.subscription(201));
    await Promise.all(members.map((member, index) => subscribe(member, targets[index] as { endpoint: string; keys: any })));

    // Act
    await post(author as User, roomId, 'to the crowd');

    // Assess
    await eventually('all seven pushes', async () => targets.every((target) => statuses.requestsTo(target.endpoint) === 1));
  });

  it('carries no content preview from an e2e room', async () => {
    // Arrange
    const [author, reader] = await users(2);
    const roomId = await roomOf([author, reader] as User[], { e2eEnabled: true });
    const browser = await browsers.subscribe(await vapidPublicKey());
    await subscribe(reader as User, browser);

    // Act
    const message = await post(author as User, roomId, 'Y2lwaGVydGV4dCBvbmx5');

    // Assess
    const [received] = await eventually('the push', async () => {
      const messages = await browsers.notifications(browser);
      return messages.length > 0 && messages;
    });
    const payload = JSON.parse(received as string);
    expect(payload).toMatchObject({ roomId, messageId: message.id });
    expect(payload).not.toHaveProperty('preview');
    expect(received).not.toContain('Y2lwaGVydGV4dCBvbmx5');
  });
});

describe('recipients follow membership and targets', () => {
  it('reaches members who subscribed before joining (created with the room, added, or joining a public room), and no longer those who left or unsubscribed', async () => {
    // Arrange: everyone subscribes first
    const [author, founder, added, joiner, leaver, unsubscriber] = await users(6);
    const targets = [founder, added, joiner, leaver, unsubscriber].map(() => statuses.subscription(201));
    const [founderTarget, addedTarget, joinerTarget, leaverTarget, unsubscriberTarget] = targets as ReturnType<
      typeof statuses.subscription
    >[];
    await subscribe(founder as User, founderTarget as never);
    await subscribe(added as User, addedTarget as never);
    await subscribe(joiner as User, joinerTarget as never);
    await subscribe(leaver as User, leaverTarget as never);
    await subscribe(unsubscriber as User, unsubscriberTarget as never);
    const roomId = unique('public');
    const synced = await rosterSyncs();
    expect(
      (
        await call('/rooms', {
          apiKey,
          body: { id: roomId, type: 'public', members: [author, founder, leaver, unsubscriber].map((user) => user?.userId) },
        })
      ).status,
    ).toBe(201);
    expect((await call(`/rooms/${roomId}/members`, { apiKey, body: { userId: added?.userId, role: 'member' } })).status).toBe(201);
    expect((await call(`/rooms/${roomId}/messages`, { token: (joiner as User).token })).status).toBe(200);
    expect((await call(`/rooms/${roomId}/members/${leaver?.userId}`, { method: 'DELETE', token: (leaver as User).token })).status).toBe(
      204,
    );
    // Four members with the room, one added, one joining, one leaving.
    await membershipsHandled(synced, 7);
    const endpointPath = encodeURIComponent(unsubscriberTarget?.endpoint as string);
    expect((await call(`/push/web/subscribe/${endpointPath}`, { method: 'DELETE', token: (unsubscriber as User).token })).status).toBe(204);

    // Act
    await post(author as User, roomId, 'who is here?');

    // Assess
    await eventually('the three present subscribers', async () =>
      [founderTarget, addedTarget, joinerTarget].every((target) => statuses.requestsTo(target?.endpoint as string) === 1),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(statuses.requestsTo(leaverTarget?.endpoint as string)).toBe(0);
    expect(statuses.requestsTo(unsubscriberTarget?.endpoint as string)).toBe(0);
  });

  it("reaches a member added after the room's first message with the next message, once the join is handled", async () => {
    // Arrange: a room with a message already sent, and a user with a subscription who is not in it yet
    const [author, newcomer] = await users(2);
    // Counted before the room exists: its creation announces the author's join too.
    const synced = await rosterSyncs();
    const roomId = await roomOf([author as User]);
    const browser = await browsers.subscribe(await vapidPublicKey());
    await subscribe(newcomer as User, browser);
    await post(author as User, roomId, 'before the newcomer');

    // Act
    const added = await call(`/rooms/${roomId}/members`, { apiKey, body: { userId: newcomer?.userId } });
    await membershipsHandled(synced, 2);
    await rosterSyncsSettled();
    const welcome = await post(author as User, roomId, 'welcome!');

    // Assess
    expect(added.status).toBe(201);
    const [received] = await eventually('the newcomer’s first push', async () => {
      const messages = await browsers.notifications(browser);
      return messages.length > 0 && messages;
    });
    expect(JSON.parse(received as string)).toMatchObject({ roomId, messageId: welcome.id, preview: 'welcome!' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await browsers.notifications(browser)).toHaveLength(1);
  });

  it('moves a device token to the user who registered it last: the previous holder is no longer notified on it', async () => {
    // Arrange
    await putConfig({ fcmServerKey: LEGACY_KEY });
    const [author, before, after] = await users(3);
    const roomId = await roomOf([author, before, after] as User[]);
    const shared = fcmToken();
    const first = await call('/push/devices', { token: (before as User).token, body: { platform: 'fcm', token: shared } });
    const racing = await Promise.all(
      Array.from({ length: 4 }, () => call('/push/devices', { token: (after as User).token, body: { platform: 'fcm', token: shared } })),
    );

    // Act
    await post(author as User, roomId, 'for the new holder only');

    // Assess
    expect(first.status).toBe(201);
    expect(racing.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 201]);
    expect(await devicesOf(before as User)).toEqual([]);
    expect((await devicesOf(after as User)).map((device) => device.token)).toEqual([shared]);
    await eventually('one push for the token', async () => fcm.legacySends.some((send) => send.body.to === shared));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fcm.legacySends.filter((send) => send.body.to === shared)).toHaveLength(1);
    await putConfig({ fcmServerKey: null });
  });
});

describe('mobile push after a message', () => {
  it('uses FCM HTTP v1 with one OAuth token for many pushes, then the legacy key once one is set; a dead token is removed', async () => {
    // Arrange
    await putConfig({ fcmServerKey: null, fcmProjectId: 'chat-push-tests', fcmServiceAccountJson: serviceAccountJson });
    const [author, reader, gone] = await users(3);
    const roomId = await roomOf([author, reader, gone] as User[]);
    const readerToken = fcmToken();
    const goneToken = fcmToken();
    await call('/push/devices', { token: (reader as User).token, body: { platform: 'android', token: readerToken } });
    await call('/push/devices', { token: (gone as User).token, body: { platform: 'fcm', token: goneToken } });
    fcm.deadTokens.add(goneToken);
    const tokensBefore = fcm.tokenRequests;

    // Act
    for (let sent = 1; sent <= 3; sent++) await post(author as User, roomId, `v1 message ${sent}`);
    await eventually('three v1 sends', async () => fcm.v1Sends.filter((send) => send.message.token === readerToken).length === 3);
    await eventually('the dead device removed', async () => (await devicesOf(gone as User)).length === 0);
    await putConfig({ fcmServerKey: LEGACY_KEY });
    await post(author as User, roomId, 'legacy message');

    // Assess
    expect(fcm.tokenRequests - tokensBefore).toBeLessThanOrEqual(1);
    const v1 = fcm.v1Sends.find((send) => send.message.token === readerToken);
    expect(v1).toMatchObject({ projectId: 'chat-push-tests', message: { data: { roomId, userId: author?.userId, type: 'message' } } });
    const legacy = await eventually('the legacy send', async () => fcm.legacySends.find((send) => send.body.to === readerToken));
    expect(legacy).toMatchObject({ serverKey: LEGACY_KEY, body: { data: { roomId, preview: 'legacy message' } } });
    expect(fcm.v1Sends.filter((send) => send.message.token === readerToken)).toHaveLength(3);
    expect(await devicesOf(reader as User)).toHaveLength(1);
    await putConfig({ fcmServerKey: null });
  });

  it('sends APNs over HTTP/2 with one provider token and the bundle topic; 410 and BadDeviceToken remove the device', async () => {
    // Arrange
    await putConfig({
      apnsBundleId: APNS.bundleId,
      apnsKeyId: APNS.keyId,
      apnsTeamId: APNS.teamId,
      apnsPrivateKey: apnsKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      apnsUseSandbox: false,
    });
    const [author, reader, unregistered, bad] = await users(4);
    const roomId = await roomOf([author, reader, unregistered, bad] as User[]);
    const tokens = { reader: apnsToken(), unregistered: apnsToken(), bad: apnsToken() };
    await call('/push/devices', { token: (reader as User).token, body: { platform: 'ios', token: tokens.reader } });
    await call('/push/devices', { token: (unregistered as User).token, body: { platform: 'apns', token: tokens.unregistered } });
    await call('/push/devices', { token: (bad as User).token, body: { platform: 'ios', token: tokens.bad } });
    apns.unregisteredTokens.add(tokens.unregistered);
    apns.badDeviceTokens.add(tokens.bad);
    const providerTokensBefore = apns.providerTokens.size;

    // Act
    await post(author as User, roomId, 'to the iPhones');
    await post(author as User, roomId, 'and again');

    // Assess
    await eventually('two pushes to the reader', async () => apns.pushes.filter((push) => push.token === tokens.reader).length === 2);
    // The two messages' pushes are dispatched concurrently: either may arrive first.
    const pushes = apns.pushes.filter((candidate) => candidate.token === tokens.reader);
    for (const push of pushes) {
      expect(push.headers).toMatchObject({ 'apns-topic': APNS.bundleId, 'apns-push-type': 'alert' });
      expect(push.payload).toMatchObject({ roomId, type: 'message', userId: author?.userId });
    }
    expect(pushes.map((push) => (push.payload as { aps: { alert: { body: string } } }).aps.alert.body).sort()).toEqual([
      'and again',
      'to the iPhones',
    ]);
    expect(apns.providerTokens.size - providerTokensBefore).toBeLessThanOrEqual(1);
    await eventually(
      'both dead devices removed',
      async () => (await devicesOf(unregistered as User)).length + (await devicesOf(bad as User)).length === 0,
    );
    expect(await devicesOf(reader as User)).toHaveLength(1);
  });

  it('logs push.skipped, devices counted by provider, when a project has devices but no provider configured for them', async () => {
    // Arrange: a project of its own, so no other test's push configuration reaches it
    const created = await call('/platform/projects', {
      body: { name: 'unconfigured' },
      headers: { 'x-service-operator-key': OPERATOR_KEY },
    });
    expect(created.status).toBe(201);
    const { projectId, apiKey: projectKey } = created.body as { projectId: string; apiKey: string };
    const token = async (userId: string) => (await call('/auth/token', { apiKey: projectKey, body: { userId } })).body.token as string;
    const [authorToken, iphoneToken, pixelToken] = await Promise.all([token('author'), token('iphone'), token('pixel')]);
    expect((await call('/push/devices', { token: iphoneToken, body: { platform: 'ios', token: apnsToken() } })).status).toBe(201);
    expect((await call('/push/devices', { token: pixelToken, body: { platform: 'android', token: fcmToken() } })).status).toBe(201);
    const synced = await rosterSyncs();
    const roomId = unique('room');
    const room = await call('/rooms', { apiKey: projectKey, body: { id: roomId, type: 'group', members: ['author', 'iphone', 'pixel'] } });
    expect(room.status).toBe(201);
    await membershipsHandled(synced, 3);
    await rosterSyncsSettled();

    // Act
    expect((await call('/messages', { token: authorToken, body: { roomId, content: 'anyone there?' } })).status).toBe(201);

    // Assess
    const [skipped] = await eventually('the push.skipped line', async () => {
      const lines = logLines('push.skipped').filter((line) => line.projectId === projectId);
      return lines.length > 0 && lines;
    });
    expect(skipped).toMatchObject({ level: 'WARN', reason: 'no provider configured', devices: { apns: 1, fcm: 1 } });
    expect(skipped?.hint).toMatch(/PUT \/push\/config/);
  });

  it('skips members with an open socket to the room unless they are mentioned', async () => {
    // Arrange
    await putConfig({ fcmServerKey: LEGACY_KEY });
    const [author, online, mentioned] = await users(3);
    const roomId = await roomOf([author, online, mentioned] as User[]);
    const tokens = { online: fcmToken(), mentioned: fcmToken() };
    await call('/push/devices', { token: (online as User).token, body: { platform: 'fcm', token: tokens.online } });
    await call('/push/devices', { token: (mentioned as User).token, body: { platform: 'fcm', token: tokens.mentioned } });
    const wsUrl = local.baseUrl.replace(/^http/, 'ws');
    sockets.push(await connect(roomId, (online as User).token, { wsUrl }), await connect(roomId, (mentioned as User).token, { wsUrl }));

    // Act
    await post(author as User, roomId, `plain message`);
    await post(author as User, roomId, `hey @${mentioned?.userId}`);

    // Assess
    await eventually('the mention pushed', async () => fcm.legacySends.some((send) => send.body.to === tokens.mentioned));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fcm.legacySends.filter((send) => send.body.to === tokens.mentioned)).toHaveLength(1);
    expect(fcm.legacySends.filter((send) => send.body.to === tokens.online)).toHaveLength(0);
    await putConfig({ fcmServerKey: null });
  });
});

describe('settings', () => {
  // Starts a runtime of its own (DynamoDB Local included), as the file's beforeAll does.
  it("sends FCM through the operator's global legacy key (FCM_SERVER_KEY, the fcm-legacy-key secret) for a project without keys of its own", async () => {
    // Prepare: a second runtime with the global key and no push configuration at all
    const globalKey = `global-${randomBytes(12).toString('hex')}`;
    const server = await startFcmServer({ legacyKeys: [globalKey] });
    const other = await startLocalProcess({
      args: ['--in-memory'],
      env: { FCM_BASE_URL: server.url, FCM_SERVER_KEY: globalKey, GOOGLE_OAUTH_BASE_URL: server.url },
    });
    try {
      const otherCall = clientOf(other.baseUrl);
      const token = async (userId: string) =>
        (await otherCall('/auth/token', { apiKey: other.apiKey, body: { userId } })).body.token as string;
      const [authorToken, readerToken] = await Promise.all([token('author'), token('reader')]);
      const deviceToken = fcmToken();
      await otherCall('/push/devices', { token: readerToken, body: { platform: 'android', token: deviceToken } });
      await otherCall('/rooms', { apiKey: other.apiKey, body: { id: 'global-key-room', type: 'group', members: ['author', 'reader'] } });
      // The reader's roster entry comes with their join's event.
      await eventually('both joins handled by push', async () => {
        const { metrics } = (await otherCall('/_local/stats')).body as { metrics: Record<string, number> };
        return (metrics.push_roster_synced ?? 0) >= 2;
      });

      // Act
      await otherCall('/messages', { token: authorToken, body: { roomId: 'global-key-room', content: 'through the global key' } });

      // Assess
      const sent = await eventually('the legacy send', async () => server.legacySends.find((send) => send.body.to === deviceToken));
      expect(sent.serverKey).toBe(globalKey);
      expect(server.tokenRequests).toBe(0);
    } finally {
      await other.stop();
      await server.close();
    }
  }, 90_000);

  it('refuses to start with a VAPID_SUBJECT that is not mailto: or https://, naming it', async () => {
    // Act
    const started = startLocalProcess({ args: ['--in-memory'], env: { VAPID_SUBJECT: 'push-operator@example.com' } });

    // Assess
    await expect(started).rejects.toThrow(/VAPID_SUBJECT/);
  });
});
