import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * Who reads the audit log: project admins, owners and the API key. The marketplace callback takes
 * no credential of ours, only its signature (test/e2e/audit.test.ts). The matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-audit');

describeRoleMatrix('Audit', roles, {
  minRole: {
    ListAuditEvents: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api('/admin/audit/events?limit=5', auth);
        return { ...response, check: async (allowed) => expect(Array.isArray(response.body?.events)).toBe(allowed) };
      },
    },
  },
});
