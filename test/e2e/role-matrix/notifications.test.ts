import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';
import { seedFeedEntries, seedNotification } from '../../support/notifications';

/** The inbox and the feed belong to the caller alone: every user JWT reaches its own, the API key none; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-notifications');
const { project } = roles;
const ownInbox = (token: string) => api('/notifications', { token });

describeRoleMatrix('Notifications', roles, {
  ownTargetRules: [
    {
      route: 'ListNotifications',
      success: 200,
      async act(auth, owner) {
        const id = await seedNotification(project.projectId, owner.userId);
        const response = await api('/notifications', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.notifications.map((n: any) => n.id)).toContain(id);
            else expect(response.body.notifications).toBeUndefined();
          },
        };
      },
    },
    {
      route: 'ReadNotification',
      success: 200,
      async act(auth, owner) {
        const id = await seedNotification(project.projectId, owner.userId);
        const response = await api(`/notifications/${id}/read`, { ...auth, method: 'POST' });
        return {
          ...response,
          check: async (allowed) => {
            const stored = (await ownInbox(owner.token)).body.notifications.find((n: any) => n.id === id);
            expect(stored.readAt !== null).toBe(allowed);
          },
        };
      },
    },
    {
      route: 'ReadAllNotifications',
      success: 200,
      async act(auth, owner) {
        const id = await seedNotification(project.projectId, owner.userId);
        const response = await api('/notifications/read-all', { ...auth, method: 'POST' });
        return {
          ...response,
          check: async (allowed) => {
            const stored = (await ownInbox(owner.token)).body.notifications.find((n: any) => n.id === id);
            expect(stored.readAt !== null).toBe(allowed);
          },
        };
      },
    },
    {
      route: 'GetActivityFeed',
      success: 200,
      async act(auth, owner) {
        await seedFeedEntries(project.projectId, owner.userId, 1, `feed-of-${owner.userId}`);
        const response = await api('/user/activity-feed', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.entries.map((e: any) => e.roomId)).toContain(`feed-of-${owner.userId}-0`);
            else expect(response.body.entries).toBeUndefined();
          },
        };
      },
    },
  ],
});
