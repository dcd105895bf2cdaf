import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { type Auth, describeRoleMatrix, roleMatrixBeforeAll, type UserKey } from '../../support/matrices/role-driver';

/**
 * Who may export and erase: every role from member up exports its own subject, admins and owners
 * erase (their own subject here; acting for another is `test/e2e/gdpr.test.ts`), the API key is no
 * subject (401). The download link takes no role (its signed token is the credential, covered in
 * the gdpr suite). The matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-privacy');
const { project, users, tokens } = roles;

const userOf = (auth: Auth) => (Object.entries(tokens) as [UserKey, string][]).find(([, token]) => token === auth.token)?.[0];

/** A fresh group room the caller (when a user) belongs to: what an erasure must end, and a refusal keep. */
async function roomOf(auth: Auth) {
  const roomId = uniqueId('room');
  const user = userOf(auth);
  await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type: 'group', members: user ? [users[user]] : [] } });
  return { roomId, user };
}
const memberIds = async (roomId: string) =>
  ((await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey })).body.members as any[]).map((member) => member.userId);

describeRoleMatrix('Privacy', roles, {
  minRole: {
    ExportSubjectData: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const { roomId, user } = await roomOf(auth);
        const response = await api('/gdpr/export', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (!allowed) return expect(response.body.memberships).toBeUndefined();
            expect(response.body.subject.userId).toBe(user && users[user]);
            expect(response.body.memberships.map((membership: any) => membership.roomId)).toContain(roomId);
          },
        };
      },
    },
    EraseSubject: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const { roomId, user } = await roomOf(auth);
        const response = await api('/gdpr/delete', { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.status).toBe('done');
            const members = await memberIds(roomId);
            if (user) expect(members.includes(users[user])).toBe(!allowed);
          },
        };
      },
    },
  },
});
