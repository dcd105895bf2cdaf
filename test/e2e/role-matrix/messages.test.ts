import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import {
  type Answer,
  callerTable,
  describeRoleMatrix,
  NO_API_KEY,
  ROOM_CALLERS,
  roleMatrixBeforeAll,
} from '../../support/matrices/role-driver';

/** Who may import messages and moderate, and who may backdate a message; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-messages');
const { project, newRoomByKey, historyOf } = roles;
const BACKDATING_FORBIDDEN: Answer = [403, 'backdating_forbidden'];

describeRoleMatrix('Messages', roles, {
  minRole: {
    ImportMessage: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const roomId = await newRoomByKey();
        const response = await api('/admin/messages/import', { ...auth, body: { roomId, userId: 'legacy', content: 'imported' } });
        return { ...response, check: async (allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0) };
      },
    },
    ImportMessageBatch: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const roomId = await newRoomByKey();
        const response = await api('/admin/messages/import/batch', {
          ...auth,
          body: { messages: [{ roomId, userId: 'legacy', content: 'imported' }] },
        });
        return { ...response, check: async (allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0) };
      },
    },
    GetBlockList: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/moderation/blocklist', auth),
    },
    ReplaceBlockList: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const term = uniqueId('term');
        const response = await api('/admin/moderation/blocklist', { ...auth, method: 'PUT', body: { terms: [term] } });
        return {
          ...response,
          check: async (allowed) => {
            const terms = (await api('/admin/moderation/blocklist', { apiKey: project.apiKey })).body.terms;
            expect(terms.includes(term)).toBe(allowed);
          },
        };
      },
    },
    ListModerationFlags: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/moderation/flags', auth),
    },
  },
  roomRules: [
    {
      route: 'PostRoomMessage',
      rule: 'backdating (createdAt, another userId): admin, owner or API key',
      expected: callerTable({ callers: ROOM_CALLERS, allowed: ['admin', 'owner', 'apiKey'], success: 201, refused: BACKDATING_FORBIDDEN }),
      act: (auth, { roomId }) =>
        api(`/rooms/${roomId}/messages`, { ...auth, body: { content: 'old', userId: 'archivist', createdAt: '2020-05-05T05:05:05.000Z' } }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'CreateMessage',
      rule: 'backdating (createdAt): admin or owner JWT (the route takes no API key)',
      expected: callerTable({
        callers: ROOM_CALLERS,
        allowed: ['admin', 'owner'],
        success: 201,
        refused: BACKDATING_FORBIDDEN,
        except: { apiKey: NO_API_KEY },
      }),
      act: (auth, { roomId }) =>
        api('/messages', { ...auth, body: { roomId, content: 'old', userId: 'archivist', createdAt: '2020-05-05T05:05:05.000Z' } }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
  ],
});
