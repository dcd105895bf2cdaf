import { beforeAll, describe, expect, it } from 'vitest';
import { pushRecordKey } from '#shared/db/push-record';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';
import { fcmToken, pushEndpoint, seedPushRecord, subscriptionKeys } from '../../support/push/fixtures';
import { get } from '../../support/raw-table';

/** Project A against project B on the Push area's routes (devices, web push, configuration, acknowledgements), and users of one project against each other; the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

const B_FCM_SERVER_KEY = 'b-fcm-legacy-server-key-0123456789';
const B_FCM_PROJECT = 'b-firebase-project';
const B_PUSH_ENVIRONMENT = 'b-staging';
/** B's push configurations (B's own environment and the default one); A never sees their fields or key. */
let bPushConfigs: any[];

beforeAll(async () => {
  const { b } = tenants();
  for (const environment of ['production', B_PUSH_ENVIRONMENT]) {
    await api('/push/config', {
      method: 'PUT',
      apiKey: b.apiKey,
      body: {
        environment,
        fcmServerKey: B_FCM_SERVER_KEY,
        fcmProjectId: B_FCM_PROJECT,
        apnsBundleId: 'com.example.b',
        webPushEnabled: false,
      },
    });
  }
  bPushConfigs = (await api('/push/config', { apiKey: b.apiKey })).body.configs;
});

/** Push targets of B's user (the shared id), made fresh per case so cases do not lean on each other. */
const registerDevice = async (token: string, deviceToken = fcmToken()) =>
  (await api('/push/devices', { token, body: { platform: 'fcm', token: deviceToken } })).body;
const subscribe = async (token: string, endpoint = pushEndpoint('b-push.example.com')) =>
  (await api('/push/web/subscribe', { token, body: { endpoint, keys: subscriptionKeys() } })).body;
const devicesOf = async (token: string) => (await api('/push/devices', { token })).body.devices as any[];
const subscriptionsOf = async (token: string) => (await api('/push/web/subscriptions', { token })).body.subscriptions as any[];
const seedPush = async (projectId: string, userId: string) => (await seedPushRecord(projectId, userId)).pushId;
const pushRecordOf = async (projectId: string, pushId: string) => {
  const key = pushRecordKey(projectId, pushId);
  return get(key.pk, key.sk);
};

describeTenantMatrix('Push', tenants, {
  async RegisterPushDevice({ a, b, aAdmin, aMember, bMember }) {
    // Prepare: B's user holds a device token
    const deviceToken = fcmToken();
    const bDevice = await registerDevice(bMember, deviceToken);

    // Act: A's user of the same id registers the same token in A; the API key is no user
    const inA = await api('/push/devices', { token: aMember, body: { platform: 'android', token: deviceToken } });
    const byKey = await api('/push/devices', { apiKey: a.apiKey, body: { platform: 'fcm', token: fcmToken() } });
    const smuggled = await api('/push/devices', { token: aAdmin, body: { platform: 'fcm', token: fcmToken(), projectId: b.projectId } });

    // Assess: A gets a device of its own (201, another id); the token stays B's in B, as it was
    expect(inA.status).toBe(201);
    expect(inA.body.id).not.toBe(bDevice.id);
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(await devicesOf(bMember)).toContainEqual(bDevice);
    expect((await devicesOf(aMember)).map((device) => device.id)).not.toContain(bDevice.id);
  },

  async ListPushDevices({ bMember, aUsers }) {
    // Prepare
    const bDevice = await registerDevice(bMember);

    // Act
    const lists = await Promise.all(aUsers().map(({ token }) => api('/push/devices', { token })));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.devices.map((device: any) => device.id)).not.toContain(bDevice.id);
      expect(JSON.stringify(list.body)).not.toContain(bDevice.token);
    }
    expect(await devicesOf(bMember)).toContainEqual(bDevice);
  },

  async DeletePushDevice({ aMember, bMember, aUsers }) {
    // Prepare: B's device, and A's own device of the same token (another id, in A)
    const deviceToken = fcmToken();
    const bDevice = await registerDevice(bMember, deviceToken);
    const aDevice = await registerDevice(aMember, deviceToken);

    // Act + Assess
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({
        label: `${who} ${bDevice.id}`,
        call: () => api(`/push/devices/${bDevice.id}`, { token, method: 'DELETE' }),
      })),
      'device_not_found',
    );
    expect((await api(`/push/devices/${aDevice.id}`, { token: aMember, method: 'DELETE' })).status).toBe(204);
    expect(await devicesOf(bMember)).toContainEqual(bDevice);
  },

  async PutPushConfig({ a, b, aAdmin }) {
    // Act: B has a production configuration; A's first one of that environment is a new one of A's
    const first = await api('/push/config', {
      method: 'PUT',
      token: aAdmin,
      body: { environment: 'production', fcmProjectId: 'a-firebase-project', webPushEnabled: true },
    });
    const second = await api('/push/config', { method: 'PUT', apiKey: a.apiKey, body: { fcmServerKey: null, apnsBundleId: null } });
    const smuggled = await api('/push/config', { method: 'PUT', apiKey: a.apiKey, body: { webPushEnabled: true, projectId: b.projectId } });

    // Assess: A's rows only hold A's fields; B's configurations are as they were, key included
    expect({ status: first.status, environment: first.body.environment, fcmProjectId: first.body.fcmProjectId }).toEqual({
      status: 201,
      environment: 'production',
      fcmProjectId: 'a-firebase-project',
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ fcmProjectId: 'a-firebase-project', apnsBundleId: null, hasFcm: false });
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect((await api('/push/config', { apiKey: b.apiKey })).body.configs).toEqual(bPushConfigs);
    expect(bPushConfigs.find((config) => config.environment === 'production')).toMatchObject({ fcmProjectId: B_FCM_PROJECT, hasFcm: true });
  },

  async GetPushConfig({ aCallers }) {
    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/push/config', auth)));

    // Assess: never B's environment, fields or key
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body.configs.map((config: any) => config.environment)).not.toContain(B_PUSH_ENVIRONMENT);
      for (const leak of [B_FCM_PROJECT, B_FCM_SERVER_KEY, 'com.example.b']) expect(JSON.stringify(read.body)).not.toContain(leak);
    }
  },

  async GetVapidPublicKey({ a, b, aAdmin }) {
    // Act: public by design, so A's API key neither adds nor takes away anything, and A's token names
    // A's project only; asked at once, first use included
    const [aKey, aAgain, aByToken, bKey, bByHeader, bWithAKey, bWithAToken] = await Promise.all([
      api(`/push/web/vapid-public-key?projectId=${a.projectId}`),
      api(`/push/web/vapid-public-key?projectId=${a.projectId}`, { token: aAdmin }),
      api('/push/web/vapid-public-key', { token: aAdmin }),
      api(`/push/web/vapid-public-key?projectId=${b.projectId}`),
      api('/push/web/vapid-public-key', { headers: { 'x-service-project-id': b.projectId } }),
      api(`/push/web/vapid-public-key?projectId=${b.projectId}`, { apiKey: a.apiKey }),
      api(`/push/web/vapid-public-key?projectId=${b.projectId}`, { token: aAdmin }),
    ]);

    // Assess: one key pair per project; B's public key is not A's, and A's token never reaches it
    expect({ status: bWithAToken.status, code: bWithAToken.body.error?.code }).toEqual({ status: 403, code: 'project_mismatch' });
    expect(aByToken.body.publicKey).toBe(aKey.body.publicKey);
    for (const response of [aKey, aAgain, aByToken, bKey, bByHeader, bWithAKey]) {
      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['publicKey']);
      const point = Buffer.from(response.body.publicKey, 'base64url');
      expect({ length: point.length, first: point[0] }).toEqual({ length: 65, first: 0x04 });
    }
    expect(aAgain.body.publicKey).toBe(aKey.body.publicKey);
    expect(bByHeader.body.publicKey).toBe(bKey.body.publicKey);
    expect(bWithAKey.body.publicKey).toBe(bKey.body.publicKey);
    expect(bKey.body.publicKey).not.toBe(aKey.body.publicKey);
  },

  async SubscribeWebPush({ a, b, aMember, bMember }) {
    // Prepare: B's user holds a subscription
    const endpoint = pushEndpoint();
    const bSubscription = await subscribe(bMember, endpoint);

    // Act: A's user claims B's project in the header, then subscribes the same endpoint in A
    const claimed = await api('/push/web/subscribe', {
      token: aMember,
      headers: { 'x-service-project-id': b.projectId },
      body: { endpoint: pushEndpoint(), keys: subscriptionKeys() },
    });
    const sameEndpoint = await api('/push/web/subscribe', { token: aMember, body: { endpoint, keys: subscriptionKeys() } });
    const byKey = await api('/push/web/subscribe', { apiKey: a.apiKey, body: { endpoint: pushEndpoint(), keys: subscriptionKeys() } });

    // Assess: A's subscription is A's (201, another id); B's stays listed for B
    expect(claimed).toMatchObject({ status: 403, body: { error: { code: 'project_mismatch' } } });
    expect(sameEndpoint.status).toBe(201);
    expect(sameEndpoint.body.id).not.toBe(bSubscription.id);
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await subscriptionsOf(bMember)).toContainEqual(bSubscription);
  },

  async UnsubscribeWebPush({ bMember, aUsers }) {
    // Prepare
    const endpoint = pushEndpoint();
    const bSubscription = await subscribe(bMember, endpoint);

    // Act + Assess: by B's id and by B's endpoint
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        [bSubscription.id, encodeURIComponent(endpoint)].map((idOrEndpoint) => ({
          label: `${who} ${idOrEndpoint}`,
          call: () => api(`/push/web/subscribe/${idOrEndpoint}`, { token, method: 'DELETE' }),
        })),
      ),
      'subscription_not_found',
    );
    expect(await subscriptionsOf(bMember)).toContainEqual(bSubscription);
  },

  async ListWebPushSubscriptions({ bMember, aUsers }) {
    // Prepare
    const endpoint = pushEndpoint();
    const bSubscription = await subscribe(bMember, endpoint);

    // Act
    const lists = await Promise.all(aUsers().map(({ token }) => api('/push/web/subscriptions', { token })));

    // Assess: neither B's id nor B's endpoint, whole or masked
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.subscriptions.map((subscription: any) => subscription.id)).not.toContain(bSubscription.id);
      for (const leak of [endpoint, bSubscription.endpoint]) expect(JSON.stringify(list.body)).not.toContain(leak);
    }
    expect(await subscriptionsOf(bMember)).toContainEqual(bSubscription);
  },

  async AcknowledgePushDelivery({ a, b, sharedUserId, bMember, aUsers }) {
    // Prepare: a push B sent to B's user of the shared id
    const pushId = await seedPush(b.projectId, sharedUserId);

    // Act + Assess: A's users of that id cannot acknowledge it
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({ label: who, call: () => api('/push/delivery-ack', { token, body: { pushId } }) })),
      'push_not_found',
    );
    expect(await pushRecordOf(b.projectId, pushId)).toMatchObject({ status: 'sent', userId: sharedUserId });
    expect(await pushRecordOf(b.projectId, pushId)).not.toHaveProperty('deliveredAt');
    expect(await pushRecordOf(a.projectId, pushId)).toBeUndefined();
    const byB = await api('/push/delivery-ack', { token: bMember, body: { pushId } });
    expect({ status: byB.status, body: byB.body }).toMatchObject({ status: 200, body: { pushId, status: 'delivered' } });
  },
});

describe("push between users of one project: a user never reaches another user's targets or pushes", () => {
  /** In B: `x` (B's user of the shared id) holds the things; `y` and B's admin are other users of B. */
  let y: string;
  let bAdmin: string;

  beforeAll(async () => {
    const { b } = tenants();
    [y, bAdmin] = await Promise.all([b.token(uniqueId('yara')), b.token(uniqueId('b-admin'), ['admin'])]);
  });

  const others = () => [
    { who: 'another member', token: y },
    { who: 'a project admin', token: bAdmin },
  ];

  it("lists only the caller's own devices and subscriptions", async () => {
    // Prepare
    const { bMember } = tenants();
    const [device, subscription] = await Promise.all([registerDevice(bMember), subscribe(bMember)]);

    // Act
    const lists = await Promise.all(
      others().flatMap(({ token }) => [api('/push/devices', { token }), api('/push/web/subscriptions', { token })]),
    );

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(device.id);
      expect(JSON.stringify(list.body)).not.toContain(subscription.id);
    }
  });

  it("answers 404 to deleting another user's device or subscription, and leaves them in place", async () => {
    // Prepare
    const { bMember } = tenants();
    const endpoint = pushEndpoint();
    const [device, subscription] = await Promise.all([registerDevice(bMember), subscribe(bMember, endpoint)]);

    // Act + Assess
    await expectAllNotFound(
      others().map(({ who, token }) => ({
        label: who,
        call: () => api(`/push/devices/${device.id}`, { token, method: 'DELETE' }),
      })),
      'device_not_found',
    );
    await expectAllNotFound(
      others().flatMap(({ who, token }) =>
        [subscription.id, encodeURIComponent(endpoint)].map((idOrEndpoint) => ({
          label: `${who} ${idOrEndpoint}`,
          call: () => api(`/push/web/subscribe/${idOrEndpoint}`, { token, method: 'DELETE' }),
        })),
      ),
      'subscription_not_found',
    );
    expect(await devicesOf(bMember)).toContainEqual(device);
    expect(await subscriptionsOf(bMember)).toContainEqual(subscription);
  });

  it("answers 404 to acknowledging another user's push, and leaves it unacknowledged", async () => {
    // Prepare
    const { b, sharedUserId } = tenants();
    const pushId = await seedPush(b.projectId, sharedUserId);

    // Act + Assess
    await expectAllNotFound(
      others().map(({ who, token }) => ({ label: who, call: () => api('/push/delivery-ack', { token, body: { pushId } }) })),
      'push_not_found',
    );
    expect(await pushRecordOf(b.projectId, pushId)).toMatchObject({ status: 'sent', userId: sharedUserId });
    expect(await pushRecordOf(b.projectId, pushId)).not.toHaveProperty('deliveredAt');
  });

  it('moves a device token or an endpoint registered again by another user (a handed-on phone), as documented', async () => {
    // Prepare
    const { bMember } = tenants();
    const deviceToken = fcmToken();
    const endpoint = pushEndpoint();
    const [device, subscription] = await Promise.all([registerDevice(bMember, deviceToken), subscribe(bMember, endpoint)]);

    // Act
    const [movedDevice, movedSubscription] = await Promise.all([registerDevice(y, deviceToken), subscribe(y, endpoint)]);

    // Assess: the new holder has them (same ids), the previous holder no longer does
    expect(movedDevice.id).toBe(device.id);
    expect(movedSubscription.id).toBe(subscription.id);
    expect((await devicesOf(bMember)).map((d) => d.id)).not.toContain(device.id);
    expect((await subscriptionsOf(bMember)).map((s) => s.id)).not.toContain(subscription.id);
    expect((await devicesOf(y)).map((d) => d.id)).toContain(device.id);
    expect((await subscriptionsOf(y)).map((s) => s.id)).toContain(subscription.id);
  });
});
