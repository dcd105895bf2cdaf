import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';
import { fcmToken, newSubscription, seedPushRecord } from '../../support/push/fixtures';
import { get } from '../../support/raw-table';

/** Who may configure push, and the push routes on the caller's own targets; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-push');
const { project } = roles;
const pushEnvironments = async () =>
  ((await api('/push/config', { apiKey: project.apiKey })).body.configs as any[]).map((config) => config.environment);
const deviceIds = async (token: string) => ((await api('/push/devices', { token })).body.devices as any[]).map((d) => d.id);
const subscriptionIds = async (token: string) =>
  ((await api('/push/web/subscriptions', { token })).body.subscriptions as any[]).map((s) => s.id);
const registered = async (token: string) =>
  (await api('/push/devices', { token, body: { platform: 'fcm', token: fcmToken() } })).body.id as string;
const subscribed = async (token: string) => (await api('/push/web/subscribe', { token, body: newSubscription() })).body.id as string;
/** A push sent to the user, written as the sender writes one (the shared runtime may not reach a sender in a test). */
async function seedPush(userId: string) {
  const { pushId, key } = await seedPushRecord(project.projectId, userId);
  return { pushId, status: async () => (await get(key.pk, key.sk))?.status };
}

describeRoleMatrix('Push', roles, {
  minRole: {
    PutPushConfig: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const environment = uniqueId('env');
        const response = await api('/push/config', { ...auth, method: 'PUT', body: { environment, webPushEnabled: false } });
        return { ...response, check: async (allowed) => expect((await pushEnvironments()).includes(environment)).toBe(allowed) };
      },
    },
    GetPushConfig: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const before = (await api('/push/config', { apiKey: project.apiKey })).body;
        const response = await api('/push/config', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toEqual({ configs: expect.any(Array) });
            expect((await api('/push/config', { apiKey: project.apiKey })).body).toEqual(before);
          },
        };
      },
    },
  },
  ownTargetRules: [
    {
      route: 'RegisterPushDevice',
      success: 201,
      async act(auth, owner) {
        const response = await api('/push/devices', { ...auth, body: { platform: 'fcm', token: fcmToken() } });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(await deviceIds(owner.token)).toContain(response.body.id);
          },
        };
      },
    },
    {
      route: 'ListPushDevices',
      success: 200,
      async act(auth, owner) {
        const deviceId = await registered(owner.token);
        const response = await api('/push/devices', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.devices.map((d: any) => d.id)).toContain(deviceId);
          },
        };
      },
    },
    {
      route: 'DeletePushDevice',
      success: 204,
      async act(auth, owner) {
        const deviceId = await registered(owner.token);
        const response = await api(`/push/devices/${deviceId}`, { ...auth, method: 'DELETE' });
        return { ...response, check: async (allowed) => expect((await deviceIds(owner.token)).includes(deviceId)).toBe(!allowed) };
      },
    },
    {
      route: 'SubscribeWebPush',
      success: 201,
      async act(auth, owner) {
        const response = await api('/push/web/subscribe', { ...auth, body: newSubscription() });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(await subscriptionIds(owner.token)).toContain(response.body.id);
          },
        };
      },
    },
    {
      route: 'UnsubscribeWebPush',
      success: 204,
      async act(auth, owner) {
        const subscriptionId = await subscribed(owner.token);
        const response = await api(`/push/web/subscribe/${subscriptionId}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await subscriptionIds(owner.token)).includes(subscriptionId)).toBe(!allowed),
        };
      },
    },
    {
      route: 'ListWebPushSubscriptions',
      success: 200,
      async act(auth, owner) {
        const subscriptionId = await subscribed(owner.token);
        const response = await api('/push/web/subscriptions', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.subscriptions.map((s: any) => s.id)).toContain(subscriptionId);
          },
        };
      },
    },
    {
      route: 'AcknowledgePushDelivery',
      success: 200,
      async act(auth, owner) {
        const push = await seedPush(owner.userId);
        const response = await api('/push/delivery-ack', { ...auth, body: { pushId: push.pushId } });
        return { ...response, check: async (allowed) => expect(await push.status()).toBe(allowed ? 'delivered' : 'sent') };
      },
    },
  ],
});
