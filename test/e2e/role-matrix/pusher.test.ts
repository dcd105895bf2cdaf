import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * Who may run the project's Pusher app (admins and the API key create, rotate and read it) and who
 * gets a channel auth (members and above with a user JWT, in a room they belong to). The trigger
 * API takes no credential of ours, only the app's signature (test/e2e/pusher-http.test.ts). The
 * matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-pusher');
const { project, roomOfEveryRole } = roles;

const currentApp = async () => (await api('/admin/pusher-app', { apiKey: project.apiKey })).body as { appId: string; key: string };

beforeAll(async () => {
  expect((await api('/admin/pusher-app', { apiKey: project.apiKey, method: 'POST' })).status).toBe(201);
});

describeRoleMatrix('Pusher', roles, {
  minRole: {
    PutPusherApp: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const before = await currentApp();
        const response = await api('/admin/pusher-app', { ...auth, method: 'POST' });
        return { ...response, check: async (allowed) => expect((await currentApp()).key !== before.key).toBe(allowed) };
      },
    },
    GetPusherApp: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api('/admin/pusher-app', auth);
        return { ...response, check: async (allowed) => expect(response.body?.key === (await currentApp()).key).toBe(allowed) };
      },
    },
    AuthorizeChannel: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        const response = await api('/auth/channel', { ...auth, body: { socket_id: '123.456', channel_name: `presence-room-${roomId}` } });
        return {
          ...response,
          check: async (allowed) => expect(String(response.body?.auth ?? '').startsWith(`${(await currentApp()).key}:`)).toBe(allowed),
        };
      },
    },
  },
});
