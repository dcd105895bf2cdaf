import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundError } from '#shared/outbound';
import { type ApnsCredentials, checkApnsKey, sendApns } from '#shared/providers/apns';
import { type FcmServiceAccount, type MobileNotification, parseServiceAccount, sendFcmLegacy, sendFcmV1 } from '#shared/providers/fcm';
import { encryptWebPush, generateVapidKeys, sendWebPush, type VapidKeys } from '#shared/providers/web-push';
import { isVapidSubject } from '#shared/urls';
import { type ApnsServer, startApnsServer } from '../support/push/apns-server';
import { type FcmServer, startFcmServer } from '../support/push/fcm-server';
import { type StatusPushService, startStatusPushService, startWebPushTesting, type WebPushTesting } from '../support/push/web-push-service';

/**
 * The push provider adapters of `functions/shared/providers/` against local servers speaking each
 * provider's protocol on 127.0.0.1: web push through the `web-push-testing` push service (which
 * verifies VAPID and decrypts) and through a service answering chosen statuses, FCM's OAuth token
 * endpoint with its v1 and legacy sends, and APNs over HTTP/2 with a self-signed certificate.
 */

const pkcs8 = { type: 'pkcs8', format: 'pem' } as const;
const spki = { type: 'spki', format: 'pem' } as const;
const rsaKeys = () => generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: spki, privateKeyEncoding: pkcs8 });
const p256Keys = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: spki, privateKeyEncoding: pkcs8 });

/** A URL nothing listens on: a port that was just free. */
async function closedPortUrl(scheme: 'http' | 'https'): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `${scheme}://127.0.0.1:${port}`;
}

async function rejectionOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

describe('web push', () => {
  const vapid: VapidKeys = { subject: 'mailto:push@chat.example', ...generateVapidKeys() };
  const loopback = { allowPrivate: true };
  let testing: WebPushTesting;
  let statusService: StatusPushService;

  beforeAll(async () => {
    [testing, statusService] = await Promise.all([startWebPushTesting(), startStatusPushService()]);
  });
  afterAll(async () => {
    await Promise.all([testing.close(), statusService.close()]);
  });

  it('arrives at a push service decrypted intact, its VAPID JWT accepted', async () => {
    // Prepare
    const subscription = await testing.subscribe(vapid.publicKey);
    const payload = JSON.stringify({ title: 'Ada in #général', body: 'ça marche 🎉'.repeat(40), roomId: 'room-1' });

    // Act
    const first = await sendWebPush(subscription, payload, vapid, loopback);
    const second = await sendWebPush(subscription, 'second', vapid, loopback);

    // Assess
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await testing.notifications(subscription)).toEqual([payload, 'second']);
  });

  it('returns 410 from the push service for an expired subscription', async () => {
    // Prepare
    const subscription = await testing.subscribe(vapid.publicKey);
    await testing.expire(subscription);

    // Act
    const { status } = await sendWebPush(subscription, 'hello', vapid, loopback);

    // Assess
    expect(status).toBe(410);
    expect(await testing.notifications(subscription)).toEqual([]);
  });

  it('puts the protocol headers and a VAPID JWT for the endpoint origin, valid 12 h, on the wire', async () => {
    // Prepare
    const subscription = statusService.subscription(201);
    const before = Math.floor(Date.now() / 1000);

    // Act
    await sendWebPush(subscription, 'hello', vapid, loopback);

    // Assess
    const request = statusService.requests.find((recorded) => recorded.endpoint === subscription.endpoint);
    expect(request?.headers).toMatchObject({
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
      ttl: '60',
      urgency: 'normal',
      'content-length': String(request?.body.length),
    });
    const authorization = /^vapid t=([^,]+), k=(.+)$/.exec(request?.headers.authorization ?? '');
    expect(authorization?.[2]).toBe(vapid.publicKey);
    const raw = Buffer.from(vapid.publicKey, 'base64url');
    const key = await importJWK(
      { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') },
      'ES256',
    );
    const jwt = authorization?.[1] ?? '';
    const { payload } = await jwtVerify(jwt, key, { algorithms: ['ES256'], audience: statusService.url });
    expect(decodeProtectedHeader(jwt).alg).toBe('ES256');
    expect(payload.sub).toBe(vapid.subject);
    expect(payload.exp).toBeGreaterThanOrEqual(before + 12 * 3600);
    expect(payload.exp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 12 * 3600);
    // RFC 8188 header: 16-byte salt, record size 4096, then the 65-byte ephemeral public key as key id.
    const body = request?.body ?? Buffer.alloc(0);
    expect(body.readUInt32BE(16)).toBe(4096);
    expect(body[20]).toBe(65);
    expect(body[21]).toBe(0x04);
  });

  describe.each([201, 404, 410, 429, 400, 401, 403, 500])('an endpoint answering %i', (answered) => {
    it('returns the push service status', async () => {
      // Prepare
      const subscription = statusService.subscription(answered);

      // Act
      const { status } = await sendWebPush(subscription, '{"title":"t"}', vapid, loopback);

      // Assess
      expect(status).toBe(answered);
      expect(statusService.requestsTo(subscription.endpoint)).toBe(1);
    });
  });

  it('refuses a private endpoint when private targets are not allowed, sending nothing', async () => {
    // Prepare
    const subscription = statusService.subscription(201);

    // Act
    const error = await rejectionOf(sendWebPush(subscription, 'hello', vapid, { allowPrivate: false }));

    // Assess
    expect(error).toBeInstanceOf(OutboundError);
    expect(error).toMatchObject({ code: 'private_address' });
    expect(statusService.requestsTo(subscription.endpoint)).toBe(0);
  });

  it('fails with an OutboundError when the push service cannot be reached', async () => {
    // Prepare
    const subscription = { ...statusService.subscription(201), endpoint: `${await closedPortUrl('http')}/push/201/x` };

    // Act
    const error = await rejectionOf(sendWebPush(subscription, 'hello', vapid, loopback));

    // Assess
    expect(error).toMatchObject({ name: 'OutboundError', code: 'network' });
  });

  it('encrypts a new message and signs a new JWT for every push', () => {
    // Prepare
    const subscription = statusService.subscription(201);

    // Act
    const first = encryptWebPush(subscription, 'same', vapid);
    const second = encryptWebPush(subscription, 'same', vapid);

    // Assess
    expect(first.endpoint).toBe(subscription.endpoint);
    expect(first.headers).not.toHaveProperty('content-length');
    expect(first.body.equals(second.body)).toBe(false);
    expect(first.headers.authorization).not.toBe(second.headers.authorization);
  });

  it.each([
    ['mailto:push@chat.example', true],
    ['https://chat.example/contact', true],
    ['http://chat.example/contact', false],
    ['push@chat.example', false],
    ['mailto:', false],
    ['https://', false],
  ])('takes %s as a VAPID subject: %s', (subject, accepted) => {
    expect(isVapidSubject(subject)).toBe(accepted);
  });
});

describe('FCM', () => {
  const notification: MobileNotification = { title: 'Ada', body: 'hello', data: { roomId: 'room-1', messageId: 'm-1' } };
  const serviceKeys = rsaKeys();
  let fcm: FcmServer;
  let accounts = 0;
  /** A service account of its own per test: access tokens are cached per account in module scope. */
  const newAccount = (privateKey = serviceKeys.privateKey): FcmServiceAccount => {
    accounts += 1;
    return parseServiceAccount(
      JSON.stringify({ type: 'service_account', client_email: `push-${accounts}@chat.iam.gserviceaccount.com`, private_key: privateKey }),
    );
  };
  const v1 = (serviceAccount: FcmServiceAccount, token: string) =>
    sendFcmV1({ baseUrl: fcm.url, oauthBaseUrl: fcm.url, projectId: 'chat-project', serviceAccount, token, notification });

  beforeAll(async () => {
    fcm = await startFcmServer({ serviceAccountPublicKey: serviceKeys.publicKey, legacyKeys: ['legacy-server-key'] });
  });
  afterAll(async () => {
    await fcm.close();
  });

  describe('legacy API', () => {
    it('sends with the server key and the notification', async () => {
      // Act
      const result = await sendFcmLegacy({ baseUrl: fcm.url, serverKey: 'legacy-server-key', token: 'legacy-token-1', notification });

      // Assess
      expect(result).toEqual({ outcome: 'sent' });
      expect(fcm.legacySends.find((sent) => sent.body.to === 'legacy-token-1')).toEqual({
        serverKey: 'legacy-server-key',
        body: { to: 'legacy-token-1', notification: { title: 'Ada', body: 'hello' }, data: notification.data },
      });
    });

    it('reports an unregistered token as dead', async () => {
      // Prepare
      fcm.deadTokens.add('legacy-dead');

      // Act
      const result = await sendFcmLegacy({ baseUrl: fcm.url, serverKey: 'legacy-server-key', token: 'legacy-dead', notification });

      // Assess
      expect(result).toEqual({ outcome: 'dead_token' });
    });

    it('reports a token that was never valid as dead', async () => {
      // Prepare
      fcm.invalidTokens.add('legacy-invalid');

      // Act
      const result = await sendFcmLegacy({ baseUrl: fcm.url, serverKey: 'legacy-server-key', token: 'legacy-invalid', notification });

      // Assess
      expect(result).toEqual({ outcome: 'dead_token' });
    });

    it('fails with the status when the server key is refused', async () => {
      // Act
      const result = await sendFcmLegacy({ baseUrl: fcm.url, serverKey: 'wrong-key', token: 'legacy-token-2', notification });

      // Assess
      expect(result).toEqual({ outcome: 'failed', status: 401, reason: 'HTTP 401' });
      expect(fcm.legacySends.some((sent) => sent.body.to === 'legacy-token-2')).toBe(false);
    });
  });

  describe('HTTP v1', () => {
    it('gets one access token and reuses it for every send', async () => {
      // Prepare
      const account = newAccount();
      const requestsBefore = fcm.tokenRequests;

      // Act
      const results = [await v1(account, 'v1-a'), await v1(account, 'v1-b'), await v1(account, 'v1-c')];

      // Assess
      expect(results).toEqual([{ outcome: 'sent' }, { outcome: 'sent' }, { outcome: 'sent' }]);
      expect(fcm.tokenRequests - requestsBefore).toBe(1);
      const sent = fcm.v1Sends.filter((send) => ['v1-a', 'v1-b', 'v1-c'].includes(send.message.token ?? ''));
      expect(new Set(sent.map((send) => send.accessToken)).size).toBe(1);
      expect(sent[0]).toMatchObject({
        projectId: 'chat-project',
        message: { token: 'v1-a', notification: { title: 'Ada', body: 'hello' }, data: notification.data },
      });
    });

    it('never hands one tenant the token of another that named the same client_email with another key', async () => {
      // Prepare: the same account e-mail, two private keys (two projects' configurations)
      const email = `shared-${accounts++}@chat.iam.gserviceaccount.com`;
      const owner = parseServiceAccount(JSON.stringify({ client_email: email, private_key: serviceKeys.privateKey }));
      const impostor = parseServiceAccount(JSON.stringify({ client_email: email, private_key: rsaKeys().privateKey }));
      await v1(owner, 'owner-first');
      const requestsBefore = fcm.tokenRequests;

      // Act
      const result = await v1(impostor, 'impostor-send');

      // Assess: the impostor's own assertion is refused by the token endpoint; nothing is sent
      expect(fcm.tokenRequests - requestsBefore).toBe(1);
      expect(result.outcome).toBe('failed');
      expect(fcm.v1Sends.some((send) => send.message.token === 'impostor-send')).toBe(false);
    });

    it('keeps a device on a bare 404 (a wrong base URL or project), which says nothing about the token', async () => {
      // Act
      const result = await sendFcmV1({
        baseUrl: `${fcm.url}/no-such-prefix`,
        oauthBaseUrl: fcm.url,
        projectId: 'chat-project',
        serviceAccount: newAccount(),
        token: 'kept',
        notification,
      });

      // Assess
      expect(result).toMatchObject({ outcome: 'failed', status: 404 });
    });

    it('shares one token request among concurrent first sends', async () => {
      // Prepare
      const account = newAccount();
      const requestsBefore = fcm.tokenRequests;

      // Act
      const results = await Promise.all(['c1', 'c2', 'c3', 'c4', 'c5'].map((token) => v1(account, token)));

      // Assess
      expect(results.every((result) => result.outcome === 'sent')).toBe(true);
      expect(fcm.tokenRequests - requestsBefore).toBe(1);
    });

    it('drops a token FCM refuses with 401 and gets a new one for the next send', async () => {
      // Prepare
      const account = newAccount();
      await v1(account, 'before-revoke');
      const requestsBefore = fcm.tokenRequests;
      fcm.revokeAccessTokens();

      // Act
      const refused = await v1(account, 'after-revoke-1');
      const next = await v1(account, 'after-revoke-2');

      // Assess
      expect(refused).toEqual({ outcome: 'failed', status: 401, reason: 'UNAUTHENTICATED' });
      expect(next).toEqual({ outcome: 'sent' });
      expect(fcm.tokenRequests - requestsBefore).toBe(1);
    });

    it('reports an unregistered token as dead', async () => {
      // Prepare
      fcm.deadTokens.add('v1-dead');

      // Act
      const result = await v1(newAccount(), 'v1-dead');

      // Assess
      expect(result).toEqual({ outcome: 'dead_token' });
    });

    it('reports a token FCM calls an invalid argument as dead', async () => {
      // Prepare
      fcm.invalidTokens.add('v1-invalid');

      // Act
      const result = await v1(newAccount(), 'v1-invalid');

      // Assess
      expect(result).toEqual({ outcome: 'dead_token' });
    });

    it('keeps the token when the invalid argument is another field', async () => {
      // Prepare: a data value that is not a string, which the type forbids and FCM refuses
      const data = { count: 3 } as unknown as Record<string, string>;

      // Act
      const result = await sendFcmV1({
        baseUrl: fcm.url,
        oauthBaseUrl: fcm.url,
        projectId: 'chat-project',
        serviceAccount: newAccount(),
        token: 'v1-valid',
        notification: { ...notification, data },
      });

      // Assess
      expect(result).toEqual({ outcome: 'failed', status: 400, reason: 'INVALID_ARGUMENT' });
    });

    it('fails, sending nothing, when the token endpoint refuses the assertion', async () => {
      // Prepare: a key the server does not know for the account
      const account = newAccount(rsaKeys().privateKey);

      // Act
      const result = await v1(account, 'never-sent');

      // Assess
      expect(result).toMatchObject({ outcome: 'failed', status: 400, reason: expect.stringContaining('invalid_grant') });
      expect(fcm.v1Sends.some((send) => send.message.token === 'never-sent')).toBe(false);
    });

    it('fails when FCM cannot be reached', async () => {
      // Act
      const result = await sendFcmV1({
        baseUrl: await closedPortUrl('http'),
        oauthBaseUrl: fcm.url,
        projectId: 'chat-project',
        serviceAccount: newAccount(),
        token: 't',
        notification,
      });

      // Assess
      expect(result).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/^network: /) });
    });
  });

  describe('parseServiceAccount', () => {
    const { privateKey: ecKey } = p256Keys();
    const pkcs1 = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: spki,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    }).privateKey;
    const account = (fields: Record<string, unknown>) =>
      JSON.stringify({ client_email: 'push@chat.iam.gserviceaccount.com', private_key: serviceKeys.privateKey, ...fields });

    it('reads a key file', () => {
      expect(parseServiceAccount(account({ token_uri: 'https://oauth2.googleapis.com/token' }))).toEqual({
        client_email: 'push@chat.iam.gserviceaccount.com',
        private_key: serviceKeys.privateKey,
        token_uri: 'https://oauth2.googleapis.com/token',
      });
    });

    it.each([
      ['not JSON', '{client_email:', /not valid JSON/],
      ['an array', '[]', /JSON object/],
      ['no client_email', account({ client_email: undefined }), /no client_email/],
      ['no private_key', account({ private_key: '' }), /no private_key/],
      ['a PKCS#1 key', account({ private_key: pkcs1 }), /PKCS#8/],
      ['an EC key', account({ private_key: ecKey }), /RSA key/],
      ['a damaged key', account({ private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }), /not a readable/],
    ])('refuses %s', (_case, json, message) => {
      expect(() => parseServiceAccount(json)).toThrow(message);
    });
  });
});

describe('APNs', () => {
  const bundleId = 'com.example.chat';
  const payload = { aps: { alert: { title: 'Ada', body: 'hello' }, sound: 'default' }, roomId: 'room-1' };
  const appleKeys = p256Keys();
  const credentials: ApnsCredentials = { keyId: 'KEY1234567', teamId: 'TEAM123456', privateKey: appleKeys.privateKey };
  let apns: ApnsServer;
  const push = (token: string, extra: Partial<Parameters<typeof sendApns>[0]> = {}) =>
    sendApns({ baseUrl: apns.url, ca: apns.ca, credentials, bundleId, token, payload, ...extra });

  beforeAll(async () => {
    apns = await startApnsServer({ teamId: credentials.teamId, keyId: credentials.keyId, publicKey: appleKeys.publicKey, bundleId });
  });
  afterAll(async () => {
    await apns.close();
  });

  it('sends an alert with the provider token, topic and headers APNs requires', async () => {
    // Act
    const result = await push('aa11');

    // Assess
    expect(result).toEqual({ outcome: 'sent' });
    const received = apns.pushes.find((pushed) => pushed.token === 'aa11');
    expect(received?.payload).toEqual(payload);
    expect(received?.headers).toMatchObject({
      ':method': 'POST',
      ':path': '/3/device/aa11',
      'apns-topic': bundleId,
      'apns-push-type': 'alert',
      'apns-priority': '10',
      'apns-expiration': '0',
    });
  });

  it('sends a background push at priority 5', async () => {
    // Act
    const result = await push('bb22', { pushType: 'background', payload: { aps: { 'content-available': 1 } } });

    // Assess
    expect(result).toEqual({ outcome: 'sent' });
    expect(apns.pushes.find((pushed) => pushed.token === 'bb22')?.headers).toMatchObject({
      'apns-push-type': 'background',
      'apns-priority': '5',
    });
  });

  it('reuses one provider token and one connection across sends', async () => {
    // Act
    const results = await Promise.all(['cc1', 'cc2', 'cc3', 'cc4'].map((token) => push(token)));
    const later = await push('cc5');

    // Assess
    expect([...results, later].every((result) => result.outcome === 'sent')).toBe(true);
    expect(apns.providerTokens.size).toBe(1);
    expect(apns.connections).toBe(1);
  });

  it('opens a new connection after APNs closed the old one', async () => {
    // Prepare
    await push('dd1');
    const before = apns.connections;
    apns.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Act
    const result = await push('dd2');

    // Assess
    expect(result).toEqual({ outcome: 'sent' });
    expect(apns.connections).toBe(before + 1);
  });

  it('sends again on a new connection a push APNs refused unprocessed while closing the old one', async () => {
    // Prepare: the GOAWAY is on its way when the push is sent, so the stream is refused
    await push('dd3');
    const before = apns.connections;
    apns.dropConnections();

    // Act
    const result = await push('dd4');

    // Assess
    expect(result).toEqual({ outcome: 'sent' });
    expect(apns.pushes.filter((pushed) => pushed.token === 'dd4')).toHaveLength(1);
    expect(apns.connections).toBe(before + 1);
  });

  it('reports 410 Unregistered as a dead token', async () => {
    // Prepare
    apns.unregisteredTokens.add('ee1');

    // Act
    const result = await push('ee1');

    // Assess
    expect(result).toEqual({ outcome: 'dead_token' });
  });

  it('reports 400 BadDeviceToken as a dead token', async () => {
    // Prepare
    apns.badDeviceTokens.add('ee2');

    // Act
    const result = await push('ee2');

    // Assess
    expect(result).toEqual({ outcome: 'dead_token' });
  });

  it('fails with the reason when the topic is not the app APNs expects', async () => {
    // Act
    const result = await push('ff1', { bundleId: 'com.example.other' });

    // Assess
    expect(result).toEqual({ outcome: 'failed', status: 400, reason: 'DeviceTokenNotForTopic' });
  });

  it('fails with InvalidProviderToken for a key APNs does not know', async () => {
    // Act
    const result = await push('ff2', { credentials: { ...credentials, teamId: 'OTHERTEAM1' } });

    // Assess
    expect(result).toEqual({ outcome: 'failed', status: 403, reason: 'InvalidProviderToken' });
  });

  it('signs a new provider token after APNs answered ExpiredProviderToken', async () => {
    // Prepare: a key of its own, as provider tokens are cached per team and key in module scope
    const keys = p256Keys();
    const own: ApnsCredentials = { keyId: 'KEYEXPIRE1', teamId: 'TEAMEXPIRE', privateKey: keys.privateKey };
    const server = await startApnsServer({ teamId: own.teamId, keyId: own.keyId, publicKey: keys.publicKey, bundleId });
    try {
      const send = (token: string) => sendApns({ baseUrl: server.url, ca: server.ca, credentials: own, bundleId, token, payload });
      await send('gg1');
      server.expireProviderTokensSeen();

      // Act
      const refused = await send('gg2');
      const next = await send('gg3');

      // Assess
      expect(refused).toEqual({ outcome: 'failed', status: 403, reason: 'ExpiredProviderToken' });
      expect(next).toEqual({ outcome: 'sent' });
      expect(server.providerTokens.size).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('does not trust the self-signed certificate without ca, and fails instead of crashing', async () => {
    // Act
    const result = await sendApns({ baseUrl: apns.url, credentials, bundleId, token: 'hh1', payload });

    // Assess
    expect(result).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/SELF_SIGNED|certificate/i) });
    expect(apns.pushes.some((pushed) => pushed.token === 'hh1')).toBe(false);
  });

  it('fails when APNs cannot be reached', async () => {
    // Act
    const result = await sendApns({ baseUrl: await closedPortUrl('https'), ca: apns.ca, credentials, bundleId, token: 'hh2', payload });

    // Assess
    expect(result).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('cancels the stream and fails when APNs does not answer in time', async () => {
    // Prepare
    apns.stalledTokens.add('ii1');
    const cancelledBefore = apns.cancelledStreams;

    // Act
    const result = await push('ii1', { timeoutMs: 200 });

    // Assess
    expect(result).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/^timeout/) });
    const deadline = Date.now() + 2000;
    while (apns.cancelledStreams === cancelledBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(apns.cancelledStreams).toBe(cancelledBefore + 1);
  });

  describe('checkApnsKey', () => {
    it('accepts a .p8 key', () => {
      expect(() => checkApnsKey(appleKeys.privateKey)).not.toThrow();
    });

    it.each([
      ['an RSA key', () => rsaKeys().privateKey, /EC P-256/],
      [
        'a P-384 key',
        () => generateKeyPairSync('ec', { namedCurve: 'secp384r1', publicKeyEncoding: spki, privateKeyEncoding: pkcs8 }).privateKey,
        /EC P-256/,
      ],
      [
        'a SEC1 key',
        () =>
          generateKeyPairSync('ec', {
            namedCurve: 'prime256v1',
            publicKeyEncoding: spki,
            privateKeyEncoding: { type: 'sec1', format: 'pem' },
          }).privateKey,
        /PKCS#8/,
      ],
      ['a damaged key', () => '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /not a readable/],
    ])('refuses %s', (_case, key, message) => {
      expect(() => checkApnsKey(key())).toThrow(message);
    });
  });
});
