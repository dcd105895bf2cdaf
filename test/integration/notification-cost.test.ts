import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { readActivityFeed } from '#domain/notifications/feed';
import { createNotification } from '#domain/notifications/inbox';
import { writeNotificationsFor } from '#domain/notifications/writer';
import { createProject } from '#domain/projects/projects';
import { putAll } from '#shared/db/batch';
import { membershipItemFor } from '#shared/db/membership';
import { domainEvent } from '#shared/events';
import { uniqueId } from '../support/api';
import { dynamoRequestsOf } from '../support/dynamo-requests';

/**
 * What the inbox and the feed cost in DynamoDB requests, counted on the SDK client the domain code
 * uses: a feed page is one Query however many rooms the user is in (the subscriber wrote the
 * entries into the user's own partition), and creating a notification is one transaction and the
 * user-channel lookup.
 */

const ROOMS = 500;
let projectId: string;

beforeAll(async () => {
  projectId = (await createProject({ name: 'notification-cost', projectId: uniqueId('cost').toLowerCase() })).projectId;
});

/** The commands the domain's DynamoDB client sends while `work` runs. */
const requestsOf = async (work: () => Promise<unknown>) => (await dynamoRequestsOf(work)).map((request) => request.command);

describe('the activity feed of a user in 500 rooms', () => {
  it('reads a page with one Query, and pages through every room summary with one Query a page', async () => {
    // Prepare: the user in 500 rooms, and a summary of each room through the subscriber's own code
    const userId = uniqueId('busy');
    const roomIds = Array.from({ length: ROOMS }, (_, index) => `room-${index}`);
    const joinedAt = new Date().toISOString();
    await putAll(roomIds.map((roomId) => membershipItemFor(projectId, roomId, userId, 'member', joinedAt)));
    const start = Date.now() - ROOMS * 1000;
    for (let i = 0; i < ROOMS; i += 50) {
      await Promise.all(
        roomIds.slice(i, i + 50).map((roomId, offset) => {
          const at = new Date(start + (i + offset) * 1000).toISOString();
          const payload = {
            roomId,
            summaryId: `sum-${roomId}`,
            summary: `about ${roomId}`,
            messageCount: 1,
            fromMessageId: 1,
            toMessageId: 2,
            createdAt: at,
          };
          return writeNotificationsFor(domainEvent('room.summary', projectId, payload, { id: randomUUID(), createdAt: at }));
        }),
      );
    }

    // Act
    let first: Awaited<ReturnType<typeof readActivityFeed>> | undefined;
    const firstPage = await requestsOf(async () => {
      first = await readActivityFeed(projectId, userId, { limit: 50 });
    });
    const seen: string[] = [];
    const perPage: number[] = [];
    let cursor: string | undefined;
    do {
      let page: Awaited<ReturnType<typeof readActivityFeed>> | undefined;
      perPage.push(
        (
          await requestsOf(async () => {
            page = await readActivityFeed(projectId, userId, { limit: 100, ...(cursor ? { cursor } : {}) });
          })
        ).length,
      );
      seen.push(...(page?.entries ?? []).map((entry) => entry.roomId));
      cursor = page?.nextCursor ?? undefined;
    } while (cursor);

    // Assess
    expect(firstPage).toEqual(['Query']);
    expect(first?.entries.map((entry) => entry.roomId)).toEqual(roomIds.slice(-50).reverse());
    expect(perPage).toEqual([1, 1, 1, 1, 1]);
    expect(seen).toEqual([...roomIds].reverse());
  }, 120_000);
});

describe('creating a notification', () => {
  it('costs one transaction and the user-channel lookup (2 requests), and nothing but the refused transaction when it exists', async () => {
    // Prepare
    const userId = uniqueId('notified');
    const input = {
      projectId,
      userId,
      kind: 'mention' as const,
      sourceId: randomUUID(),
      createdAt: new Date().toISOString(),
      title: 'You were mentioned',
      body: 'hello',
    };
    // Warms the per-instance list of webhook registrations, as a running subscriber has it.
    await createNotification({ ...input, sourceId: randomUUID() });

    // Act
    let created: boolean | undefined;
    let again: boolean | undefined;
    const first = await requestsOf(async () => {
      created = await createNotification(input);
    });
    const repeat = await requestsOf(async () => {
      again = await createNotification(input);
    });

    // Assess
    expect([created, again]).toEqual([true, false]);
    expect(first).toEqual(['TransactWriteItems', 'Query']);
    expect(repeat).toEqual(['TransactWriteItems']);
  });
});
