import { beforeAll, describe, it } from 'vitest';
import type { TestProject } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  expectInvalid,
  type RouteRequests,
  sender,
} from '../../support/matrices/validation-driver';
import { seedNotification } from '../../support/notifications';

/** Bad input to the Notifications area's routes (the inbox, the feed); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
let memberToken: string;
let memberId: string;
let notificationId: string;

beforeAll(async () => {
  ({ project, memberToken, memberId } = await createValidationProject('validation-notifications'));
  notificationId = await seedNotification(project.projectId, memberId);
});

const requests: RouteRequests = {
  ListNotifications: { path: () => '/notifications?limit=5&unread=true', auth: () => ({ token: memberToken }), success: 200 },
  ReadNotification: { path: () => `/notifications/${notificationId}/read`, auth: () => ({ token: memberToken }), success: 200 },
  ReadAllNotifications: { path: () => '/notifications/read-all', auth: () => ({ token: memberToken }), success: 200 },
  GetActivityFeed: { path: () => '/user/activity-feed?limit=5', auth: () => ({ token: memberToken }), success: 200 },
};

describeValidationMatrix('Notifications', requests, {});

const send = sender(requests);

describe('query parameters', () => {
  it.each([
    { route: 'ListNotifications', query: 'limit=0', field: 'query.limit' },
    { route: 'ListNotifications', query: 'limit=101', field: 'query.limit' },
    { route: 'ListNotifications', query: 'limit=ten', field: 'query.limit' },
    { route: 'ListNotifications', query: 'unread=yes', field: 'query.unread' },
    { route: 'ListNotifications', query: 'cursor=abc', field: 'query.cursor' },
    { route: 'ListNotifications', query: 'cursor=000000000000001-zzzzzzzzzzzzzzzz', field: 'query.cursor' },
    { route: 'GetActivityFeed', query: 'limit=0', field: 'query.limit' },
    { route: 'GetActivityFeed', query: 'limit=1.5', field: 'query.limit' },
    { route: 'GetActivityFeed', query: 'cursor=a%23b', field: 'query.cursor' },
  ])('$route ?$query → 400 naming $field', async ({ route, query, field }) => {
    // Act
    const response = await send(route, { path: `${route === 'ListNotifications' ? '/notifications' : '/user/activity-feed'}?${query}` });

    // Assess
    expectInvalid(response, field);
  });
});
