import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/** Who may read the project's figures, score and alerts (moderators up) and set its objectives (admins up); the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-stats');
const { project } = roles;
const objectivesOf = async () => (await api('/admin/stats/objectives', { apiKey: project.apiKey })).body.objectives;

describeRoleMatrix('Stats', roles, {
  minRole: {
    GetOpsStats: { minRole: 'moderator', success: 200, act: (auth) => api('/stats/ops?minutes=5', auth) },
    GetSloStats: { minRole: 'moderator', success: 200, act: (auth) => api('/stats/slo?minutes=5', auth) },
    ListStatsAlerts: { minRole: 'moderator', success: 200, act: (auth) => api('/stats/alerts', auth) },
    GetStatsObjectives: { minRole: 'admin', success: 200, act: (auth) => api('/admin/stats/objectives', auth) },
    PutStatsObjectives: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const before = { availability: 0.999, latencyP95Ms: 500 };
        await api('/admin/stats/objectives', { apiKey: project.apiKey, method: 'PUT', body: before });
        const response = await api('/admin/stats/objectives', { ...auth, method: 'PUT', body: { availability: 0.95, latencyP95Ms: 900 } });
        return {
          ...response,
          check: async (allowed) => {
            expect(await objectivesOf()).toEqual(allowed ? { availability: 0.95, latencyP95Ms: 900 } : before);
          },
        };
      },
    },
  },
});
