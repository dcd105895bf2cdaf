import { expect } from 'vitest';
import { api } from '../../support/api';
import { bridgeBodies, createSlackBridge } from '../../support/bridges';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * Who may link rooms to Slack, Discord and Matrix: project admins and the API key create, read,
 * change and remove bridges; the platform webhooks take no credentials of ours (their signatures
 * are the bridge suites', test/e2e/bridges-inbound.test.ts). The matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-bridges');
const { project } = roles;

const bridgesOf = async () => (await api('/admin/bridges', { apiKey: project.apiKey })).body.bridges as any[];
const newBridgeByKey = async () => (await createSlackBridge(project.apiKey, await roles.newRoomByKey())).id as string;

describeRoleMatrix('Bridges', roles, {
  minRole: {
    CreateBridge: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const roomId = await roles.newRoomByKey();
        const response = await api('/admin/bridges', { ...auth, body: bridgeBodies.matrix(roomId) });
        return {
          ...response,
          check: async (allowed) => expect((await bridgesOf()).some((bridge) => bridge.roomId === roomId)).toBe(allowed),
        };
      },
    },
    ListBridges: { minRole: 'admin', success: 200, act: (auth) => api('/admin/bridges', auth) },
    GetBridge: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api(`/admin/bridges/${await newBridgeByKey()}`, auth);
        return { ...response, check: async (allowed) => expect(response.body?.platform === 'slack').toBe(allowed) };
      },
    },
    UpdateBridge: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const bridgeId = await newBridgeByKey();
        const response = await api(`/admin/bridges/${bridgeId}`, { ...auth, method: 'PATCH', body: { channelId: 'CNEW0001' } });
        return {
          ...response,
          check: async (allowed) => {
            const stored = await api(`/admin/bridges/${bridgeId}`, { apiKey: project.apiKey });
            expect(stored.body.settings.channelId === 'CNEW0001').toBe(allowed);
          },
        };
      },
    },
    DeleteBridge: {
      minRole: 'admin',
      success: 204,
      async act(auth) {
        const bridgeId = await newBridgeByKey();
        const response = await api(`/admin/bridges/${bridgeId}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await bridgesOf()).some((bridge) => bridge.id === bridgeId)).toBe(!allowed),
        };
      },
    },
  },
});
