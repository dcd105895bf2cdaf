import { createECDH, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { vapidKey } from '#shared/db/push-vapid';
import { api, createTestProject, type TestProject, uniqueId } from '../../support/api';
import {
  type Body,
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  long,
  type RouteRequests,
  sender,
  set,
  textVariants,
  type Variant,
} from '../../support/matrices/validation-driver';
import { fcmToken, pushEndpoint, seedPushRecord, subscriptionKeys } from '../../support/push/fixtures';
import { get } from '../../support/raw-table';

/** Bad input to the Push area's routes (devices, web push, configuration, acknowledgements); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
/** Another project, which X-Service-Project-Id may name. */
let rotatable: TestProject;
let memberToken: string;
let memberId: string;
/** Registrations for the DeletePushDevice requests to delete, one per request (ids of the member's devices). */
const disposableDeviceIds: string[] = [];
/** Subscriptions for the UnsubscribeWebPush requests to remove, one per request (ids of the member's subscriptions). */
const disposableSubscriptionIds: string[] = [];
/** A push sent to the member, for the AcknowledgePushDelivery control; acknowledging it again changes nothing. */
const memberPushId = `push_${randomBytes(16).toString('hex')}`;

/** A fresh FCM registration token (letters, digits and `:`). */
const pem = (key: KeyObject, type: 'pkcs8' | 'pkcs1' | 'sec1') => key.export({ type, format: 'pem' }) as string;
/** Keys for the push configuration: the FCM service account's RSA key, the APNs .p8 key (EC P-256), and wrong kinds. */
const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const p256Key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const p384Key = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey;
const APNS_PRIVATE_KEY = pem(p256Key, 'pkcs8');
/** The key file of an FCM service account, as a JSON string; `fields` overrides or (with `undefined`) removes fields. */
const serviceAccount = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'service_account',
    client_email: 'push@validation.iam.gserviceaccount.com',
    private_key: pem(rsaKey, 'pkcs8'),
    token_uri: 'https://oauth2.googleapis.com/token',
    ...fields,
  });

const registerDevice = async () =>
  (await api('/push/devices', { token: memberToken, body: { platform: 'fcm', token: fcmToken() } })).body.id as string;
const subscribe = async () =>
  (await api('/push/web/subscribe', { token: memberToken, body: { endpoint: pushEndpoint(), keys: subscriptionKeys() } })).body
    .id as string;

beforeAll(async () => {
  [{ project, memberToken, memberId }, rotatable] = await Promise.all([
    createValidationProject('validation-push'),
    createTestProject('rotatable'),
  ]);
  const [devices, subscriptions] = await Promise.all([
    // The path parameter cases draw from the pools too (7 and 2 of them), so a control run again still finds one.
    Promise.all(Array.from({ length: 10 }, registerDevice)),
    Promise.all(Array.from({ length: 5 }, subscribe)),
    seedPushRecord(project.projectId, memberId, memberPushId),
  ]);
  disposableDeviceIds.push(...devices);
  disposableSubscriptionIds.push(...subscriptions);
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  RegisterPushDevice: {
    path: () => '/push/devices',
    auth: () => ({ token: memberToken }),
    body: () => ({ platform: 'fcm', token: fcmToken() }),
    success: 201,
  },
  ListPushDevices: { path: () => '/push/devices', auth: () => ({ token: memberToken }), success: 200 },
  DeletePushDevice: {
    path: () => `/push/devices/${disposableDeviceIds.pop() ?? `pd_noneLeft${'0'.repeat(14)}`}`,
    auth: () => ({ token: memberToken }),
    success: 204,
  },
  PutPushConfig: {
    path: () => '/push/config',
    auth: () => ({ apiKey: project.apiKey }),
    // A fresh environment each call, so the answer is always the 201 of a new one.
    body: () => ({
      environment: uniqueId('env'),
      fcmServerKey: 'AAAA-legacy:server_key.0123',
      fcmProjectId: 'validation-project',
      fcmServiceAccountJson: serviceAccount(),
      apnsBundleId: 'com.example.validation',
      apnsUseSandbox: true,
      apnsKeyId: 'KEY123ABCD',
      apnsTeamId: 'TEAM12345Z',
      apnsPrivateKey: APNS_PRIVATE_KEY,
      webPushEnabled: true,
    }),
    success: 201,
  },
  GetPushConfig: { path: () => '/push/config', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  GetVapidPublicKey: { path: () => `/push/web/vapid-public-key?projectId=${project.projectId}`, auth: () => ({}), success: 200 },
  SubscribeWebPush: {
    path: () => '/push/web/subscribe',
    auth: () => ({ token: memberToken }),
    body: () => ({ endpoint: pushEndpoint(), keys: subscriptionKeys(), userAgent: 'Mozilla/5.0 (validation)' }),
    success: 201,
  },
  UnsubscribeWebPush: {
    path: () => `/push/web/subscribe/${disposableSubscriptionIds.pop() ?? `ws_noneLeft${'0'.repeat(14)}`}`,
    auth: () => ({ token: memberToken }),
    success: 204,
  },
  ListWebPushSubscriptions: { path: () => '/push/web/subscriptions', auth: () => ({ token: memberToken }), success: 200 },
  AcknowledgePushDelivery: {
    path: () => '/push/delivery-ack',
    auth: () => ({ token: memberToken }),
    body: () => ({ pushId: memberPushId }),
    success: 200,
  },
};

/** Device tokens: fcm and android 16-4096 of [A-Za-z0-9_:.-], apns and ios 64-200 hex digits. */
const deviceVariants = (): Variant[] => [
  ['platform missing', drop('platform'), 'body.platform'],
  ['platform unknown', set('platform', 'windows'), 'body.platform'],
  ['platform in upper case', set('platform', 'FCM'), 'body.platform'],
  ['platform a number', set('platform', 1), 'body.platform'],
  ['platform null', set('platform', null), 'body.platform'],
  ...textVariants('token', { required: true, max: 4096 }),
  ['an fcm token of 15 characters', set('token', long(15)), 'body.token'],
  ['an fcm token with a space', set('token', 'fcm token with spaces'), 'body.token'],
  ['an fcm token with a slash', set('token', 'fcm/token/with/slashes'), 'body.token'],
  ['an android token with #', () => ({ platform: 'android', token: 'android#token#0123456789' }), 'body.token'],
  ['an apns token that is not hex', () => ({ platform: 'apns', token: 'g'.repeat(64) }), 'body.token'],
  ['an apns token of 63 hex digits', () => ({ platform: 'apns', token: 'a'.repeat(63) }), 'body.token'],
  ['an apns token of 201 hex digits', () => ({ platform: 'apns', token: 'a'.repeat(201) }), 'body.token'],
  ['an ios token that is an fcm token', () => ({ platform: 'ios', token: fcmToken() }), 'body.token'],
];

const setKey = (key: string, value: unknown) => (body: Body) => ({ ...body, keys: { ...(body.keys as Body), [key]: value } });
const dropKey = (key: string) => (body: Body) => ({ ...body, keys: drop(key)(body.keys as Body) });
const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** Subscriptions: an absolute https endpoint of at most 2048 characters, a P-256 point and a 16-byte auth secret. */
const subscriptionVariants = (): Variant[] => [
  ...textVariants('endpoint', { required: true }),
  ['endpoint of 2049 characters', set('endpoint', `https://push.example.com/${long(2024)}`), 'body.endpoint'],
  ['endpoint not an absolute URL', set('endpoint', 'push.example.com/sub/1'), 'body.endpoint'],
  ['endpoint with a space', set('endpoint', 'https://push.example.com/sub 1'), 'body.endpoint'],
  ['endpoint with credentials', set('endpoint', 'https://user:secret@push.example.com/sub/1'), 'body.endpoint'],
  ['keys missing', drop('keys'), 'body.keys'],
  ['keys a string', set('keys', 'p256dh'), 'body.keys'],
  ['keys null', set('keys', null), 'body.keys'],
  ['keys with an unknown field', setKey('extra', 'x'), 'body.keys'],
  ['p256dh missing', dropKey('p256dh'), 'body.keys.p256dh'],
  ['p256dh a number', setKey('p256dh', 65), 'body.keys.p256dh'],
  ['p256dh null', setKey('p256dh', null), 'body.keys.p256dh'],
  ['p256dh empty', setKey('p256dh', ''), 'body.keys.p256dh'],
  ['p256dh not base64url', setKey('p256dh', `${'A'.repeat(85)}+/`), 'body.keys.p256dh'],
  ['p256dh of 64 bytes', setKey('p256dh', base64url(Buffer.concat([Buffer.from([4]), randomBytes(63)]))), 'body.keys.p256dh'],
  ['p256dh of 66 bytes', setKey('p256dh', base64url(Buffer.concat([Buffer.from([4]), randomBytes(65)]))), 'body.keys.p256dh'],
  ['p256dh without 0x04 first', setKey('p256dh', base64url(Buffer.concat([Buffer.from([2]), randomBytes(64)]))), 'body.keys.p256dh'],
  ['auth missing', dropKey('auth'), 'body.keys.auth'],
  ['auth a number', setKey('auth', 16), 'body.keys.auth'],
  ['auth null', setKey('auth', null), 'body.keys.auth'],
  ['auth empty', setKey('auth', ''), 'body.keys.auth'],
  ['auth not base64url', setKey('auth', 'not base64 at all!'), 'body.keys.auth'],
  ['auth of 15 bytes', setKey('auth', base64url(randomBytes(15))), 'body.keys.auth'],
  ['auth of 17 bytes', setKey('auth', base64url(randomBytes(17))), 'body.keys.auth'],
  ['userAgent a number', set('userAgent', 5), 'body.userAgent'],
  ['userAgent null', set('userAgent', null), 'body.userAgent'],
  ['userAgent of 513 characters', set('userAgent', long(513)), 'body.userAgent'],
];

/** APNs key and team ids: exactly 10 of [A-Z0-9]. */
const appleIdVariants = (key: string): Variant[] => [
  ...textVariants(key, { nullable: true }),
  [`${key} in lower case`, set(key, 'abcde12345'), `body.${key}`],
  [`${key} of 9 characters`, set(key, 'ABCDE1234'), `body.${key}`],
  [`${key} of 11 characters`, set(key, 'ABCDE123456'), `body.${key}`],
  [`${key} with a dash`, set(key, 'ABCDE-1234'), `body.${key}`],
];

/**
 * The push configuration: every key field may be `null` (it clears), so only wrong types and
 * values are refused; the service account and the APNs key are also checked as keys.
 */
const pushConfigVariants = (): Variant[] => [
  ...textVariants('environment'),
  ['environment of 65 characters', set('environment', long(65)), 'body.environment'],
  ['environment with a space', set('environment', 'pre prod'), 'body.environment'],
  ['environment with a slash', set('environment', 'prod/eu'), 'body.environment'],
  ['environment with #', set('environment', 'prod#1'), 'body.environment'],
  ...textVariants('fcmServerKey', { nullable: true, max: 4096 }),
  ['fcmServerKey with a space', set('fcmServerKey', 'two keys'), 'body.fcmServerKey'],
  ...textVariants('fcmProjectId', { nullable: true }),
  ['fcmProjectId in upper case', set('fcmProjectId', 'My-Project'), 'body.fcmProjectId'],
  ['fcmProjectId of 5 characters', set('fcmProjectId', 'abcde'), 'body.fcmProjectId'],
  ['fcmProjectId of 64 characters', set('fcmProjectId', long(64)), 'body.fcmProjectId'],
  ['fcmProjectId starting with a digit', set('fcmProjectId', '1-project'), 'body.fcmProjectId'],
  ['fcmProjectId ending with a dash', set('fcmProjectId', 'project-'), 'body.fcmProjectId'],
  ['fcmProjectId with an underscore', set('fcmProjectId', 'my_project'), 'body.fcmProjectId'],
  ...textVariants('fcmServiceAccountJson', { nullable: true, max: 16_384 }),
  ['fcmServiceAccountJson not JSON', set('fcmServiceAccountJson', '{"client_email": '), 'body.fcmServiceAccountJson'],
  ['fcmServiceAccountJson a JSON array', set('fcmServiceAccountJson', '[]'), 'body.fcmServiceAccountJson'],
  [
    'fcmServiceAccountJson without client_email',
    set('fcmServiceAccountJson', serviceAccount({ client_email: undefined })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson without private_key',
    set('fcmServiceAccountJson', serviceAccount({ private_key: undefined })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with a private_key that is no PEM',
    set('fcmServiceAccountJson', serviceAccount({ private_key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----' })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with a PKCS#1 RSA key',
    set('fcmServiceAccountJson', serviceAccount({ private_key: pem(rsaKey, 'pkcs1') })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with an EC key',
    set('fcmServiceAccountJson', serviceAccount({ private_key: APNS_PRIVATE_KEY })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with a token_uri that is a number',
    set('fcmServiceAccountJson', serviceAccount({ token_uri: 443 })),
    'body.fcmServiceAccountJson',
  ],
  ...textVariants('apnsBundleId', { nullable: true }),
  ['apnsBundleId with a space', set('apnsBundleId', 'com.example app'), 'body.apnsBundleId'],
  ['apnsBundleId with a slash', set('apnsBundleId', 'com/example/app'), 'body.apnsBundleId'],
  ['apnsBundleId of 156 characters', set('apnsBundleId', long(156)), 'body.apnsBundleId'],
  ['apnsUseSandbox a string', set('apnsUseSandbox', 'true'), 'body.apnsUseSandbox'],
  ['apnsUseSandbox a number', set('apnsUseSandbox', 1), 'body.apnsUseSandbox'],
  ['apnsUseSandbox null', set('apnsUseSandbox', null), 'body.apnsUseSandbox'],
  ...appleIdVariants('apnsKeyId'),
  ...appleIdVariants('apnsTeamId'),
  ...textVariants('apnsPrivateKey', { nullable: true, max: 4096 }),
  ['apnsPrivateKey not a PEM key', set('apnsPrivateKey', 'not a key'), 'body.apnsPrivateKey'],
  ['apnsPrivateKey an RSA key', set('apnsPrivateKey', pem(rsaKey, 'pkcs8')), 'body.apnsPrivateKey'],
  ['apnsPrivateKey an EC P-384 key', set('apnsPrivateKey', pem(p384Key, 'pkcs8')), 'body.apnsPrivateKey'],
  ['apnsPrivateKey a SEC1 EC key', set('apnsPrivateKey', pem(p256Key, 'sec1')), 'body.apnsPrivateKey'],
  ['webPushEnabled a string', set('webPushEnabled', 'yes'), 'body.webPushEnabled'],
  ['webPushEnabled a number', set('webPushEnabled', 0), 'body.webPushEnabled'],
  ['webPushEnabled null', set('webPushEnabled', null), 'body.webPushEnabled'],
];

const fieldVariants: Record<string, Variant[]> = {
  RegisterPushDevice: deviceVariants(),
  PutPushConfig: pushConfigVariants(),
  SubscribeWebPush: subscriptionVariants(),
  AcknowledgePushDelivery: [
    ...textVariants('pushId', { required: true }),
    ['pushId without the push_ prefix', set('pushId', randomBytes(16).toString('hex')), 'body.pushId'],
    ['pushId with another prefix', set('pushId', `whd_${randomBytes(16).toString('hex')}`), 'body.pushId'],
    ['pushId of 15 characters after push_', set('pushId', `push_${long(15)}`), 'body.pushId'],
    ['pushId of 41 characters after push_', set('pushId', `push_${long(41)}`), 'body.pushId'],
    ['pushId with a dash', set('pushId', `push_${long(10)}-${long(10)}`), 'body.pushId'],
    ['pushId with a space', set('pushId', `push_${long(10)} ${long(10)}`), 'body.pushId'],
  ],
};

describeValidationMatrix('Push', requests, fieldVariants);

describe('query parameters', () => {
  it('GET /push/web/vapid-public-key?projectId=<129 characters> → 400 naming query.projectId', async () => {
    // Act
    const response = await api(`/push/web/vapid-public-key?projectId=${long(129)}`);

    // Assess
    expectInvalid(response, 'query.projectId');
  });
});

const send = sender(requests);

describe('push requests beyond the body schemas', () => {
  it.each([
    { platform: 'fcm', length: 16, token: (fresh: string) => `a:b_c-d.e${fresh.slice(0, 7)}` },
    { platform: 'android', length: 4096, token: (fresh: string) => `${'A'.repeat(4086)}${fresh}` },
    { platform: 'apns', length: 64, token: (fresh: string) => `${'aB'.repeat(27)}${fresh}` },
    { platform: 'ios', length: 200, token: (fresh: string) => `${'0'.repeat(190)}${fresh}` },
  ])(
    'RegisterPushDevice accepts an $platform token of $length characters (control for the token variants)',
    async ({ platform, length, token }) => {
      // Prepare: fresh digits, so the token is new to the member however often this runs
      const fresh = token(randomBytes(5).toString('hex'));

      // Act
      const response = await send('RegisterPushDevice', { body: { platform, token: fresh } });

      // Assess
      expect(fresh).toHaveLength(length);
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 201, error: undefined });
      expect(response.body).toMatchObject({ platform, token: fresh });
    },
  );

  it('SubscribeWebPush refuses a plain http endpoint → 400 push_endpoint_not_https naming body.endpoint', async () => {
    // Act
    const response = await send('SubscribeWebPush', {
      body: { ...requests.SubscribeWebPush?.body?.(), endpoint: 'http://example.com/sub/1' },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'push_endpoint_not_https' });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.endpoint' }));
  });

  it('SubscribeWebPush answers 403 project_mismatch when X-Service-Project-Id names another project', async () => {
    // Act
    const response = await send('SubscribeWebPush', {
      body: requests.SubscribeWebPush?.body?.(),
      headers: { 'x-service-project-id': rotatable.projectId },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'project_mismatch' });
  });

  it("SubscribeWebPush accepts X-Service-Project-Id naming the token's project (control)", async () => {
    // Act
    const response = await send('SubscribeWebPush', {
      body: requests.SubscribeWebPush?.body?.(),
      headers: { 'x-service-project-id': project.projectId },
    });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 201, error: undefined });
  });

  it('UnsubscribeWebPush accepts the endpoint percent-encoded (control for the id form)', async () => {
    // Prepare
    const body = requests.SubscribeWebPush?.body?.() as Body;
    await send('SubscribeWebPush', { body });

    // Act
    const response = await send('UnsubscribeWebPush', { path: `/push/web/subscribe/${encodeURIComponent(String(body.endpoint))}` });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 204, error: undefined });
  });

  it.each([
    'https://push.example.com',
    'https://PUSH.example.com/sub/Abc',
    'https://push.example.com:443/sub/x1',
    'https://push.example.com/sub/ü',
  ])('UnsubscribeWebPush finds %s by the spelling it was subscribed with, whatever the URL parser makes of it', async (spelling) => {
    // Prepare: a unique path, so the endpoint is new however often this runs
    const base = requests.SubscribeWebPush?.body?.() as Body;
    const endpoint = `${spelling}${spelling.includes('/sub/') ? '' : '/sub'}/${randomBytes(4).toString('hex')}`;
    expect((await send('SubscribeWebPush', { body: { ...base, endpoint } })).status).toBe(201);

    // Act
    const response = await send('UnsubscribeWebPush', { path: `/push/web/subscribe/${encodeURIComponent(endpoint)}` });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 204, error: undefined });
  });

  it('PutPushConfig and GetPushConfig answer without any key material (control of the accepted keys)', async () => {
    // Prepare
    const body = requests.PutPushConfig?.body?.() as Body;

    // Act
    const put = await send('PutPushConfig', { body });
    const read = await send('GetPushConfig');

    // Assess
    const stored = read.body.configs.find((config: any) => config.environment === body.environment);
    expect(put.body).toEqual({
      environment: body.environment,
      fcmProjectId: body.fcmProjectId,
      apnsBundleId: body.apnsBundleId,
      apnsUseSandbox: true,
      webPushEnabled: true,
      hasFcm: true,
      hasApns: true,
      updatedAt: expect.any(String),
    });
    expect(stored).toEqual(put.body);
    for (const leak of [String(body.fcmServerKey), 'PRIVATE KEY', 'client_email', String(body.apnsKeyId), String(body.apnsTeamId)]) {
      expect(JSON.stringify([put.body, read.body])).not.toContain(leak);
    }
  });

  it('RegisterPushDevice and SubscribeWebPush answer 200 with the same id to the same token or endpoint again', async () => {
    // Prepare
    const device = requests.RegisterPushDevice?.body?.() as Body;
    const subscription = requests.SubscribeWebPush?.body?.() as Body;
    const [firstDevice, firstSubscription] = [
      await send('RegisterPushDevice', { body: device }),
      await send('SubscribeWebPush', { body: subscription }),
    ];

    // Act
    const [againDevice, againSubscription] = [
      await send('RegisterPushDevice', { body: device }),
      await send('SubscribeWebPush', { body: { ...subscription, keys: subscriptionKeys() } }),
    ];

    // Assess
    expect([firstDevice.status, againDevice.status, firstSubscription.status, againSubscription.status]).toEqual([201, 200, 201, 200]);
    expect(againDevice.body.id).toBe(firstDevice.body.id);
    expect(againSubscription.body).toMatchObject({ id: firstSubscription.body.id, failureCount: 0, active: true });
    const devices = (await send('ListPushDevices')).body.devices.filter((d: any) => d.token === device.token);
    expect(devices.map((d: any) => d.id)).toEqual([firstDevice.body.id]);
  });

  it('ListWebPushSubscriptions masks the endpoint (a bearer capability) and names its host', async () => {
    // Prepare
    const body = requests.SubscribeWebPush?.body?.() as Body;
    const subscribed = await send('SubscribeWebPush', { body });

    // Act
    const list = await send('ListWebPushSubscriptions');

    // Assess
    const listed = list.body.subscriptions.find((subscription: any) => subscription.id === subscribed.body.id);
    expect(listed).toMatchObject({ endpointHost: 'push.example.com', userAgent: body.userAgent, failureCount: 0, failure_count: 0 });
    expect(JSON.stringify([subscribed.body, list.body])).not.toContain(String(body.endpoint));
  });

  it('PutPushConfig accepts null for every key field (it clears) and defaults the environment to production', async () => {
    // Prepare
    const cleared = { fcmServerKey: null, fcmProjectId: null, fcmServiceAccountJson: null, apnsBundleId: null };
    const keys = { apnsKeyId: null, apnsTeamId: null, apnsPrivateKey: null };

    // Act
    const response = await send('PutPushConfig', { body: { ...cleared, ...keys } });

    // Assess
    expect([200, 201]).toContain(response.status);
    expect(response.body).toMatchObject({
      environment: 'production',
      fcmProjectId: null,
      apnsBundleId: null,
      hasFcm: false,
      hasApns: false,
    });
  });

  it.each([
    { variant: 'no project named', headers: {} as Record<string, string> },
    { variant: 'only an API key, which names no project to a browser', headers: { 'x-service-api-key': 'ck_some-project_secret' } },
    { variant: 'an Authorization header that is no bearer token', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
  ])('GetVapidPublicKey with $variant → 400 project_required, saying how to name one', async ({ headers }) => {
    // Act
    const response = await api('/push/web/vapid-public-key', { headers });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'project_required' });
    expect(response.body.error.message).toMatch(/Authorization: Bearer .*\?projectId=.*X-Service-Project-Id/);
  });

  it.each([
    { variant: 'an empty projectId', query: '?projectId=', headers: {} as Record<string, string>, field: 'query.projectId' },
    { variant: 'a projectId that cannot be one', query: '?projectId=a%23b', headers: {}, field: 'query.projectId' },
    {
      variant: 'an X-Service-Project-Id that cannot be one',
      query: '',
      headers: { 'x-service-project-id': 'A B' },
      field: 'headers.x-service-project-id',
    },
  ])('GetVapidPublicKey with $variant → 400 naming $field', async ({ query, headers, field }) => {
    // Act
    const response = await api(`/push/web/vapid-public-key${query}`, { headers });

    // Assess
    expectInvalid(response, field);
  });

  describe('GetVapidPublicKey with a user token', () => {
    /** An HS256 token of the project signed with `secret`, expiring at `exp` (Unix seconds). */
    const tokenSignedWith = (secret: string, exp: number) =>
      new SignJWT({ projectId: project.projectId, userId: 'web-user', roles: ['member'] })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject('web-user')
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(secret));
    const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
    const keyOf = (options: Parameters<typeof api>[1], query = '') => api(`/push/web/vapid-public-key${query}`, options);

    it("answers the token's project key, as ?projectId= does, kept out of shared caches", async () => {
      // Act
      const [byToken, byQuery] = await Promise.all([keyOf({ token: memberToken }), keyOf({}, `?projectId=${project.projectId}`)]);

      // Assess
      expect(byToken.status).toBe(200);
      expect(byToken.body).toEqual(byQuery.body);
      expect(byToken.headers.get('cache-control')).toBe('private, max-age=300');
      expect(byQuery.headers.get('cache-control')).toBe('public, max-age=300');
      for (const response of [byToken, byQuery]) expect(response.headers.get('vary')).toBe('Authorization, X-Service-Project-Id, Origin');
    });

    it("answers another project's token with that project's key", async () => {
      // Prepare
      const otherToken = await rotatable.token(uniqueId('web'));

      // Act
      const [mine, theirs, theirsByQuery] = await Promise.all([
        keyOf({ token: memberToken }),
        keyOf({ token: otherToken }),
        keyOf({}, `?projectId=${rotatable.projectId}`),
      ]);

      // Assess
      expect(theirs.status).toBe(200);
      expect(theirs.body).toEqual(theirsByQuery.body);
      expect(theirs.body.publicKey).not.toBe(mine.body.publicKey);
    });

    it("accepts the token's own project named beside it", async () => {
      // Act
      const [byQuery, byHeader] = await Promise.all([
        keyOf({ token: memberToken }, `?projectId=${project.projectId}`),
        keyOf({ token: memberToken, headers: { 'x-service-project-id': project.projectId } }),
      ]);

      // Assess
      expect([byQuery.status, byHeader.status]).toEqual([200, 200]);
      expect(byHeader.body).toEqual(byQuery.body);
    });

    it.each([
      { variant: '?projectId=', query: () => `?projectId=${rotatable.projectId}`, headers: (): Record<string, string> => ({}) },
      { variant: 'X-Service-Project-Id', query: () => '', headers: () => ({ 'x-service-project-id': rotatable.projectId }) },
    ])('refuses another project named by $variant beside the token with 403 project_mismatch', async ({ query, headers }) => {
      // Act
      const response = await keyOf({ token: memberToken, headers: headers() }, query());

      // Assess
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'project_mismatch' });
    });

    it.each([
      { variant: 'a token that is not a JWT', token: 'not-a-jwt', code: 'invalid_token' },
      {
        variant: 'a token signed with another secret',
        token: () => tokenSignedWith(`${project.signingSecret}x`, inAnHour()),
        code: 'invalid_token',
      },
      {
        variant: 'an expired token',
        token: () => tokenSignedWith(project.signingSecret, Math.floor(Date.now() / 1000) - 60),
        code: 'token_expired',
      },
    ])('refuses $variant with 401 $code, with or without a project named', async ({ token, code }) => {
      // Act
      const given = typeof token === 'function' ? await token() : token;
      const responses = await Promise.all([keyOf({ token: given }), keyOf({ token: given }, `?projectId=${project.projectId}`)]);

      // Assess
      for (const response of responses)
        expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 401, code });
    });
  });

  it('GetVapidPublicKey answers a project that does not exist as one that does: a stable P-256 key of its own, nothing stored', async () => {
    // Prepare
    const missing = uniqueId('missing');
    const keyOf = (projectId: string, byHeader = false) =>
      byHeader
        ? api('/push/web/vapid-public-key', { headers: { 'x-service-project-id': projectId } })
        : api(`/push/web/vapid-public-key?projectId=${projectId}`);

    // Act
    const known = await keyOf(project.projectId);
    const answers = { unknown: await keyOf(missing), again: await keyOf(missing), byHeader: await keyOf(missing, true) };
    const otherUnknown = await keyOf(uniqueId('missing'));

    // Assess: the same status, headers and body shape; a point on the curve, as a browser's PushManager needs
    const shapeOf = (response: typeof known) => ({
      status: response.status,
      headers: (() => {
        const names: string[] = [];
        response.headers.forEach((_value, name) => {
          names.push(name);
        });
        return names.sort();
      })(),
      cacheControl: response.headers.get('cache-control'),
      fields: Object.keys(response.body),
      length: String(response.body.publicKey).length,
    });
    for (const response of [...Object.values(answers), otherUnknown]) {
      expect(shapeOf(response)).toEqual(shapeOf(known));
      const peer = createECDH('prime256v1');
      peer.generateKeys();
      expect(() => peer.computeSecret(Buffer.from(response.body.publicKey, 'base64url'))).not.toThrow();
    }
    expect(answers.again.body).toEqual(answers.unknown.body);
    expect(answers.byHeader.body).toEqual(answers.unknown.body);
    expect(new Set([known, answers.unknown, otherUnknown].map((response) => response.body.publicKey)).size).toBe(3);
    expect(await get(vapidKey(missing).pk, vapidKey(missing).sk)).toBeUndefined();
  });
});
