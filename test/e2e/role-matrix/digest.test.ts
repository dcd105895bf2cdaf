import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/** Who may run the digest, and the digest preference routes on the caller's own row; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-digest');
const preferencesOf = async (token: string) => (await api('/digest/preferences', { token })).body;

describeRoleMatrix('Digest', roles, {
  minRole: {
    RunDigest: {
      minRole: 'admin',
      success: 202,
      act: (auth) => api('/admin/digest/run', { ...auth, method: 'POST', body: { digestDate: '2030-01-01', maxUsers: 1 } }),
    },
  },
  ownTargetRules: [
    {
      route: 'GetDigestPreferences',
      success: 200,
      async act(auth) {
        const response = await api('/digest/preferences', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toMatchObject({ inAppEnabled: expect.any(Boolean), enabled: expect.any(Boolean) });
          },
        };
      },
    },
    {
      route: 'UpdateDigestPreferences',
      success: 200,
      async act(auth, owner) {
        const before = await preferencesOf(owner.token);
        const email = `${owner.userId}-${Date.now()}@example.com`;
        const response = await api('/digest/preferences', { ...auth, method: 'PATCH', body: { email } });
        return {
          ...response,
          check: async (allowed) => expect(await preferencesOf(owner.token)).toEqual(allowed ? { ...before, email } : before),
        };
      },
    },
  ],
});
