/**
 * Inbox and activity feed: DynamoDB requests per notification created (the notification subscriber's
 * domain code, run in this process on the handlers' own client, for an @mention event), per page of
 * the activity feed of a user in 500 rooms (`GET /user/activity-feed` over HTTP), and what
 * `POST /messages` costs the sender with and without an @mention (notifications are made by the
 * subscriber, never on the sender's path).
 */
import { randomUUID } from 'node:crypto';
import { type Bench, type Context, fmt, table } from './harness';
import { type Recorder, recording } from './instrument';
import { countBy, createProject, median, uniqueId } from './util';

const GOALS = { requestsPerNotification: 2, requestsPerFeedPage: 2 } as const;
const ROOMS = 500;
const FEED_PAGE = 50;
const SAMPLES = 20;

const commandsOf = (calls: readonly { command: string }[]) => calls.map((call) => call.command);

async function during(recorder: Recorder, work: () => Promise<unknown>) {
  const start = recorder.mark();
  await work();
  return commandsOf(recorder.since(start).dynamo);
}

const summary = (samples: readonly string[][]) => ({
  requestsP50: median(samples.map((sample) => sample.length)),
  requestsMax: Math.max(...samples.map((sample) => sample.length)),
  byCommand: countBy(samples.flat(), samples.length),
  typical: samples[samples.length - 1] ?? [],
});

async function measure({ service, log }: Context, recorder: Recorder) {
  const { api } = service;
  const { createNotification } = await import('#domain/notifications/inbox');
  const { writeNotificationsFor } = await import('#domain/notifications/writer');
  const { putAll } = await import('#shared/db/batch');
  const { membershipItemFor } = await import('#shared/db/membership');
  const { domainEvent } = await import('#shared/events');

  const project = await createProject(api, 'bench notifications');
  const alice = await project.token('alice');
  const roomId = uniqueId('room');
  await api.expect(201, '/rooms', { token: alice, body: { id: roomId, type: 'group', members: ['bob'] } });

  // 1. A notification created: the transaction and the user-channel lookup, with warm caches.
  const notify = () =>
    createNotification({
      projectId: project.projectId,
      userId: 'bob',
      kind: 'mention',
      sourceId: randomUUID(),
      createdAt: new Date().toISOString(),
      title: 'alice mentioned you',
      body: 'hello @bob',
      roomId,
    });
  await notify();
  const created: string[][] = [];
  for (let i = 0; i < SAMPLES; i++) created.push(await during(recorder, notify));

  // The whole subscriber for a message.created event with an @mention (room read cached after the first).
  const mentionEvent = () =>
    domainEvent(
      'message.created',
      project.projectId,
      {
        roomId,
        messageId: Date.now() * 1000,
        userId: 'alice',
        content: 'hello @bob',
        parent_id: null,
        attachments: [],
        createdAt: new Date().toISOString(),
      },
      { id: randomUUID() },
    );
  await writeNotificationsFor(mentionEvent());
  const subscriber: string[][] = [];
  for (let i = 0; i < SAMPLES; i++) subscriber.push(await during(recorder, () => writeNotificationsFor(mentionEvent())));
  // A redelivery of the same event: the refused transaction, nothing written twice.
  const repeated = mentionEvent();
  await writeNotificationsFor(repeated);
  const redelivery = await during(recorder, () => writeNotificationsFor(repeated));

  // 2. A feed page of a user in 500 rooms, each with a room summary fanned out by the subscriber.
  const busy = 'busy-user';
  const busyToken = await project.token(busy);
  const rooms = Array.from({ length: ROOMS }, (_, index) => `bench-room-${index}`);
  const joinedAt = new Date().toISOString();
  await putAll(rooms.map((id) => membershipItemFor(project.projectId, id, busy, 'member', joinedAt)));
  const start = Date.now() - ROOMS * 1000;
  const fanOut: string[][] = [];
  for (let i = 0; i < ROOMS; i += 50) {
    await Promise.all(
      rooms.slice(i, i + 50).map(async (id, offset) => {
        const at = new Date(start + (i + offset) * 1000).toISOString();
        const payload = {
          roomId: id,
          summaryId: `sum-${id}`,
          summary: `about ${id}`,
          messageCount: 1,
          fromMessageId: 1,
          toMessageId: 2,
          createdAt: at,
        };
        const event = domainEvent('room.summary', project.projectId, payload, { id: randomUUID(), createdAt: at });
        if (i === 0 && offset === 0) fanOut.push(await during(recorder, () => writeNotificationsFor(event)));
        else await writeNotificationsFor(event);
      }),
    );
  }
  log(`   ${ROOMS} rooms with a summary each in the feed of ${busy}`);
  await api.expect(200, `/user/activity-feed?limit=${FEED_PAGE}`, { token: busyToken });
  const pages: string[][] = [];
  let cursor: string | null = null;
  let entries = 0;
  do {
    const path: string = `/user/activity-feed?limit=${FEED_PAGE}${cursor ? `&cursor=${cursor}` : ''}`;
    let body: { entries: unknown[]; nextCursor: string | null } = { entries: [], nextCursor: null };
    pages.push(await during(recorder, async () => (body = (await api.expect(200, path, { token: busyToken })).body)));
    entries += body.entries.length;
    cursor = body.nextCursor;
  } while (cursor);

  // 3. The sender's path: POST /messages with and without an @mention.
  const post = (content: string) => () => api.expect(201, '/messages', { token: alice, body: { roomId, content } });
  for (let i = 0; i < 3; i++) await post('warm-up')();
  const plain: string[][] = [];
  const mention: string[][] = [];
  for (let i = 0; i < SAMPLES; i++) {
    plain.push(await during(recorder, post('a plain message')));
    mention.push(await during(recorder, post('a message for @bob')));
  }

  return {
    rooms: ROOMS,
    feedPageSize: FEED_PAGE,
    notification: summary(created),
    subscriberPerMention: summary(subscriber),
    redelivery,
    roomSummaryFanOut: fanOut[0] ?? [],
    feedPage: { ...summary(pages), pages: pages.length, entries },
    postPlain: summary(plain),
    postMention: summary(mention),
  };
}

type Notifications = Awaited<ReturnType<typeof measure>>;

const commands = (byCommand: Record<string, number>) =>
  Object.entries(byCommand)
    .map(([name, count]) => `${fmt(count, 2)} ${name}`)
    .join(', ');

export const notifications: Bench<Notifications> = {
  id: 'notifications',
  name: 'Inbox and activity feed',
  needs: 'service',
  run: (context) => recording(context.service.clients, (recorder) => measure(context, recorder), { capacity: false }),
  goals: (result) => [
    {
      id: 'notifications-per-created',
      name: 'DynamoDB requests per notification created',
      target: `≤ ${GOALS.requestsPerNotification}`,
      measured: `${result.notification.requestsMax} (${commands(result.notification.byCommand)})`,
      pass: result.notification.requestsMax <= GOALS.requestsPerNotification,
    },
    {
      id: 'notifications-feed-page',
      name: `DynamoDB requests per activity feed page (a user in ${result.rooms} rooms)`,
      target: `≤ ${GOALS.requestsPerFeedPage}`,
      measured: `${result.feedPage.requestsMax} (${commands(result.feedPage.byCommand)})`,
      pass: result.feedPage.requestsMax <= GOALS.requestsPerFeedPage,
    },
    {
      id: 'notifications-sender-path',
      name: 'DynamoDB requests POST /messages adds for an @mention (notifications are the subscriber’s)',
      target: '0',
      measured: `${result.postMention.requestsP50 - result.postPlain.requestsP50} (${result.postMention.typical.join(' → ')} both)`,
      pass:
        result.postMention.requestsMax === result.postPlain.requestsMax && result.postMention.requestsP50 === result.postPlain.requestsP50,
    },
  ],
  section(result) {
    const row = (what: string, s: ReturnType<typeof summary>) => [
      what,
      String(s.requestsP50),
      String(s.requestsMax),
      s.typical.join(' → '),
    ];
    return `## Inbox and activity feed

DynamoDB requests counted by SDK middleware on the handlers' own client: a notification created by
\`createNotification\` and the notification subscriber's handling of a \`message.created\` with an @mention
(run in the bench process, warm caches), a page of \`GET /user/activity-feed\` over HTTP for a user in
${result.rooms} rooms each with a room summary (pages of ${result.feedPageSize}: ${result.feedPage.pages} pages,
${result.feedPage.entries} entries), and \`POST /messages\` with and without an @mention.

${table(
  ['what', 'requests p50', 'max', 'commands'],
  [
    row('notification created (transaction, user-channel lookup)', result.notification),
    row('subscriber, one @mention (membership check, notification, feed entry)', result.subscriberPerMention),
    ['same event redelivered', String(result.redelivery.length), String(result.redelivery.length), result.redelivery.join(' → ')],
    ['room summary fanned out to a room of 1 member', String(result.roomSummaryFanOut.length), '', result.roomSummaryFanOut.join(' → ')],
    row(`activity feed page (user in ${result.rooms} rooms)`, result.feedPage),
    row('POST /messages, plain', result.postPlain),
    row('POST /messages, with an @mention', result.postMention),
  ],
)}

The feed is written on fan-out (the subscriber files each entry in the user's own partition), so a
page is one Query whatever the number of rooms; a room summary costs the subscriber a members page and
a BatchWriteItem per 25 members. The sender's request does not change with an @mention: the mention,
the notification and the feed entry are the subscriber's work, after the table stream.`;
  },
};
