import { describe, expect, it } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, tenantsBeforeAll } from '../../support/matrices/tenant-driver';
import { seedFeedEntries, seedNotification } from '../../support/notifications';

/**
 * Project A against project B on the Notifications area's routes: A's user with B's user's id sees
 * none of B's inbox or feed and cannot read B's notifications; and users of one project against
 * each other (another user's notification id is 404). The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();

const inboxOf = async (token: string) => (await api('/notifications', { token })).body;

describeTenantMatrix('Notifications', tenants, {
  async ListNotifications({ b, sharedUserId, bMember, aUsers }) {
    // Prepare
    const bId = await seedNotification(b.projectId, sharedUserId);

    // Act
    const lists = await Promise.all(aUsers().map(({ token }) => api('/notifications', { token })));

    // Assess: A's user of the same id has an inbox of its own, without B's notification
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(bId);
    }
    expect((await inboxOf(bMember)).notifications.map((n: any) => n.id)).toContain(bId);
  },

  async ReadNotification({ b, sharedUserId, bMember, aUsers }) {
    // Prepare
    const bId = await seedNotification(b.projectId, sharedUserId);

    // Act
    const responses = await Promise.all(aUsers().map(({ token }) => api(`/notifications/${bId}/read`, { token, method: 'POST' })));

    // Assess
    for (const response of responses) {
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'notification_not_found' });
    }
    const bInbox = await inboxOf(bMember);
    expect(bInbox.notifications.find((n: any) => n.id === bId).readAt).toBeNull();
  },

  async ReadAllNotifications({ b, sharedUserId, bMember, aUsers }) {
    // Prepare
    const bId = await seedNotification(b.projectId, sharedUserId);
    const before = (await inboxOf(bMember)).unreadCount;

    // Act
    const responses = await Promise.all(aUsers().map(({ token }) => api('/notifications/read-all', { token, method: 'POST' })));

    // Assess: A read its own (empty) inbox; B's is untouched
    for (const response of responses) expect(response.status).toBe(200);
    const after = await inboxOf(bMember);
    expect(after.unreadCount).toBe(before);
    expect(after.notifications.find((n: any) => n.id === bId).readAt).toBeNull();
  },

  async GetActivityFeed({ b, sharedUserId, bMember, aUsers }) {
    // Prepare
    const roomPrefix = uniqueId('b-feed');
    await seedFeedEntries(b.projectId, sharedUserId, 2, roomPrefix);

    // Act
    const feeds = await Promise.all(aUsers().map(({ token }) => api('/user/activity-feed', { token })));

    // Assess
    for (const feed of feeds) {
      expect(feed.status).toBe(200);
      expect(JSON.stringify(feed.body)).not.toContain(roomPrefix);
    }
    expect(JSON.stringify((await api('/user/activity-feed', { token: bMember })).body)).toContain(roomPrefix);
  },
});

describe('users of one project', () => {
  it("answer 404 for another user's notification id, and leave it unread", async () => {
    // Prepare
    const { b, bMember } = tenants();
    const other = uniqueId('other');
    const otherToken = await b.token(other);
    const otherId = await seedNotification(b.projectId, other);

    // Act
    const response = await api(`/notifications/${otherId}/read`, { token: bMember, method: 'POST' });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'notification_not_found' });
    expect((await inboxOf(otherToken)).notifications.find((n: any) => n.id === otherId).readAt).toBeNull();
  });
});
