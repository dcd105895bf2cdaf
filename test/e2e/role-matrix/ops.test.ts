import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * Who may read and set the project's feature flags; the matrix is `role-driver.ts`. The other routes
 * of the area (health, client flags, `/openapi.json`, `/docs`, `/docs/scalar.js`) are public: no
 * section of the matrix covers them, and test/e2e/openapi.test.ts reads the API description as anyone.
 */

const roles = roleMatrixBeforeAll('roles-ops');
const { project } = roles;

describeRoleMatrix('Ops', roles, {
  minRole: {
    GetProjectFeatureFlags: {
      minRole: 'admin',
      success: 200,
      act: (auth) => api('/admin/feature-flags', auth),
    },
    SetProjectFeatureFlags: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        await api('/admin/feature-flags', { apiKey: project.apiKey, method: 'PUT', body: { overrides: { embed_widget: true } } });
        const response = await api('/admin/feature-flags', { ...auth, method: 'PUT', body: { overrides: { embed_widget: false } } });
        return {
          ...response,
          check: async (allowed) => {
            const read = await api('/admin/feature-flags', { apiKey: project.apiKey });
            expect(read.body.overrides).toEqual({ embed_widget: !allowed });
          },
        };
      },
    },
  },
});
