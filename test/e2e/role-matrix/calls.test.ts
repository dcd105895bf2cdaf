import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * Who may take a call token (members and above, of a room they belong to; a user JWT only) and
 * record and read the voice AI latencies (admins and the API key). The matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-calls');
const { project, roomOfEveryRole } = roles;

const realtimeCount = async () =>
  (await api('/admin/voice-ai/stats?window=5m', { apiKey: project.apiKey })).body.kinds.realtime.count as number;

describeRoleMatrix('Calls', roles, {
  minRole: {
    CreateCallToken: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        const response = await api('/admin/calls/token', { ...auth, body: { roomId } });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toMatchObject({ stub: false, room: `${project.projectId}:${roomId}` });
            else expect(response.body.token).toBeUndefined();
          },
        };
      },
    },
    RecordVoiceAiMetrics: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const before = await realtimeCount();
        const response = await api('/admin/voice-ai/metrics', { ...auth, body: { kind: 'realtime', latencyMs: 120 } });
        return { ...response, check: async (allowed) => expect(await realtimeCount()).toBe(before + (allowed ? 1 : 0)) };
      },
    },
    GetVoiceAiStats: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api('/admin/voice-ai/stats', auth);
        return {
          ...response,
          check: async (allowed) =>
            allowed ? expect(response.body.kinds.realtime.targetP95Ms).toBe(300) : expect(response.body.kinds).toBeUndefined(),
        };
      },
    },
  },
});
