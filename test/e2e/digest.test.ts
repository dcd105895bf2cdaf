import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { startWebPushTesting, type TestingSubscription, type WebPushTesting } from '../support/push/web-push-service';
import { raw, table } from '../support/raw-table';
import { eventually } from '../support/webhook-receiver';

/**
 * The daily digest on the shared runtime (AI configured: the OpenAI stand-in; DAILY_DIGEST_ENABLED
 * unset, so the schedule is off): preferences, the admin run through the digest queue, delivery
 * once per channel (in-app, web push at web-push-testing, e-mail at the SES emulator), each channel
 * gated by its preference, and the e-mail's unsubscribe link. The schedule's own clock and switch
 * on are in `digest-schedule.test.ts`; 5,000 users in `digest-volume.test.ts`.
 */

let project: TestProject;
let browsers: WebPushTesting;

beforeAll(async () => {
  [project, browsers] = await Promise.all([createTestProject('digest'), startWebPushTesting()]);
});
afterAll(async () => {
  await browsers?.close();
});

interface StoredEmail {
  readonly messageId: string;
  readonly from: string;
  readonly destination: { readonly to: readonly string[] };
  readonly subject: string;
  readonly body: { readonly text?: string; readonly html?: string };
}

const mailbox = async (): Promise<StoredEmail[]> => {
  const response = await fetch(`${runtime().env.AWS_ENDPOINT_URL_SESV2}/store`);
  return ((await response.json()) as { emails: StoredEmail[] }).emails;
};
const emailsTo = async (address: string) => (await mailbox()).filter((email) => email.destination.to.includes(address));

/** The delivery claims of a user: `<date>#<channel>`. */
async function deliveries(userId: string): Promise<string[]> {
  const { Items = [] } = await raw.send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `P#${project.projectId}#U#${userId}#DIGEST` },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => String(item.sk).slice(2)).sort();
}

/** The digest pushes a browser received (members also get pushes of new messages). */
const digestPushes = async (browser: TestingSubscription) =>
  (await browsers.notifications(browser)).map((push) => JSON.parse(push) as { type: string }).filter((push) => push.type === 'digest');

/** The digest notifications of a user's inbox. */
const digestNotices = async (token: string) =>
  ((await api('/notifications', { token })).body.notifications as { kind: string; title: string; body: string; data: any }[]).filter(
    (notification) => notification.kind === 'digest',
  );

const today = () => new Date().toISOString().slice(0, 10);
const run = (digestDate: string, maxUsers = 1000) =>
  api('/admin/digest/run', { apiKey: project.apiKey, method: 'POST', body: { digestDate, maxUsers } });

interface Reader {
  readonly userId: string;
  readonly token: string;
  readonly email: string;
  readonly browser: TestingSubscription;
}

/** A subscriber with every channel on (or as given), a browser subscribed, in a room where two others talked. */
async function readerInActiveRoom(
  preferences: Record<string, unknown> = {},
): Promise<Reader & { roomId: string; talker: { userId: string; token: string } }> {
  const reader = await newUser(project, 'reader');
  const talker = await newUser(project, 'talker');
  const roomId = uniqueId('room');
  const created = await api('/rooms', {
    token: talker.token,
    body: { id: roomId, type: 'group', name: 'Launch plans', members: [reader.userId] },
  });
  expect(created.status).toBe(201);
  const root = await api('/messages', { token: talker.token, body: { roomId, content: 'Shall we ship on Friday?' } });
  await api('/messages', { token: talker.token, body: { roomId, content: 'Yes, Friday it is', parent_id: root.body.id } });
  await api('/messages', { token: talker.token, body: { roomId, content: 'Unrelated <b>note</b>' } });

  const publicKey = (await api('/push/web/vapid-public-key', { headers: { 'x-service-project-id': project.projectId } })).body.publicKey;
  const browser = await browsers.subscribe(publicKey);
  const subscribed = await api('/push/web/subscribe', { token: reader.token, body: { endpoint: browser.endpoint, keys: browser.keys } });
  expect([200, 201]).toContain(subscribed.status);

  const email = `${reader.userId}@example.com`;
  const patched = await api('/digest/preferences', {
    token: reader.token,
    method: 'PATCH',
    body: { enabled: true, email, inAppEnabled: true, webPushEnabled: true, emailEnabled: true, ...preferences },
  });
  expect(patched.status).toBe(200);
  return { ...reader, email, browser, roomId, talker };
}

describe('digest preferences', () => {
  it('are the defaults before any change, and keep the fields a PATCH leaves out', async () => {
    // Arrange
    const user = await newUser(project);

    // Act
    const before = await api('/digest/preferences', { token: user.token });
    const first = await api('/digest/preferences', { token: user.token, method: 'PATCH', body: { enabled: true, email: 'a@example.com' } });
    const second = await api('/digest/preferences', { token: user.token, method: 'PATCH', body: { webPushEnabled: true } });
    const after = await api('/digest/preferences', { token: user.token });

    // Assess
    expect(before).toMatchObject({
      status: 200,
      body: { enabled: false, email: null, inAppEnabled: true, webPushEnabled: false, emailEnabled: false },
    });
    expect(first.body).toEqual({ enabled: true, email: 'a@example.com', inAppEnabled: true, webPushEnabled: false, emailEnabled: false });
    expect(second.body).toEqual({ enabled: true, email: 'a@example.com', inAppEnabled: true, webPushEnabled: true, emailEnabled: false });
    expect(after.body).toEqual(second.body);
  });

  it('refuse a bad e-mail naming the field, and unknown fields, changing nothing', async () => {
    // Arrange
    const user = await newUser(project);
    await api('/digest/preferences', { token: user.token, method: 'PATCH', body: { enabled: true, email: 'good@example.com' } });

    // Act
    const badEmail = await api('/digest/preferences', { token: user.token, method: 'PATCH', body: { email: 'not an address' } });
    const unknown = await api('/digest/preferences', { token: user.token, method: 'PATCH', body: { enabled: false, frequency: 'weekly' } });

    // Assess
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.error.code).toBe('validation_failed');
    expect(badEmail.body.error.message).toContain('body.email');
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('frequency');
    expect((await api('/digest/preferences', { token: user.token })).body).toMatchObject({ enabled: true, email: 'good@example.com' });
  });
});

describe('the admin run', () => {
  it('delivers in-app, by web push and by e-mail (both bodies, the AI summary, the top messages), once each', async () => {
    // Arrange
    const reader = await readerInActiveRoom();
    const digestDate = today();

    // Act
    const started = await run(digestDate);

    // Assess
    expect(started).toMatchObject({ status: 202, body: { digestDate, maxUsers: 1000, status: 'queued' } });
    const [email] = await eventually('the digest e-mail', async () => {
      const emails = await emailsTo(reader.email);
      return emails.length > 0 && emails;
    });
    expect(email?.from).toBe('digest@chat.local');
    expect(email?.subject).toBe(`Your daily digest for ${digestDate}: 3 new messages in 1 room`);
    const text = email?.body.text ?? '';
    const html = email?.body.html ?? '';
    expect(text).toContain('# Launch plans (3 new messages)');
    // The AI stand-in's summary, and the replied-to message first among the top messages.
    expect(text).toMatch(/- point one: /);
    expect(text.indexOf('Shall we ship on Friday?')).toBeLessThan(text.indexOf('Yes, Friday it is'));
    expect(text).toMatch(/Stop these e-mails: http:\/\/127\.0\.0\.1:\d+\/digest\/unsubscribe\?token=du1\./);
    expect(html).toContain('<h2>Launch plans <small>(3 new)</small></h2>');
    expect(html).toContain('Unrelated &lt;b&gt;note&lt;/b&gt;');
    expect(html).toMatch(/<a href="http:\/\/127\.0\.0\.1:\d+\/digest\/unsubscribe\?token=du1\.[^"]+">Unsubscribe/);

    const [push] = await eventually('the digest push', async () => {
      const received = await digestPushes(reader.browser);
      return received.length > 0 && received;
    });
    expect(push).toEqual({
      type: 'digest',
      projectId: project.projectId,
      digestDate,
      title: `Your daily digest for ${digestDate}: 3 new messages in 1 room`,
      body: 'Launch plans: 3 new',
    });
    const [notice] = await eventually('the digest notification', async () => {
      const notices = await digestNotices(reader.token);
      return notices.length > 0 && notices;
    });
    expect(notice).toMatchObject({
      kind: 'digest',
      title: `Your daily digest for ${digestDate}: 3 new messages in 1 room`,
      body: 'Launch plans: 3 new',
      data: {
        digestDate,
        rooms: [{ roomId: reader.roomId, roomName: 'Launch plans', messageCount: 3, summary: expect.stringMatching(/^- /) }],
      },
    });
    expect(await deliveries(reader.userId)).toEqual([`${digestDate}#email`, `${digestDate}#in_app`, `${digestDate}#web_push`]);
  });

  it('two runs after each other and two at once for the same date deliver once per channel', async () => {
    // Arrange
    const reader = await readerInActiveRoom();
    const digestDate = '2031-02-03';

    // Act
    await run(digestDate);
    await eventually('the first e-mail', async () => (await emailsTo(reader.email)).length === 1);
    await run(digestDate);
    await Promise.all([run(digestDate), run(digestDate)]);
    // The next date starts where the first run of this one ended: it holds the message posted since, only.
    await api('/messages', { token: reader.talker.token, body: { roomId: reader.roomId, content: 'One more thing' } });
    await run('2031-02-04');
    await eventually('the next date’s e-mail', async () => (await emailsTo(reader.email)).length === 2);
    // A user's channels are sent side by side: the e-mail says nothing of the push and the notice.
    await eventually(
      'the next date’s push and notice',
      async () => (await digestPushes(reader.browser)).length >= 2 && (await digestNotices(reader.token)).length >= 2,
    );
    // Runs queued before it have had their turn by now; a late duplicate would still show within this.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    // Assess
    const subjects = (await emailsTo(reader.email)).map((email) => email.subject).sort();
    expect(subjects).toEqual([
      'Your daily digest for 2031-02-03: 3 new messages in 1 room',
      'Your daily digest for 2031-02-04: 1 new message in 1 room',
    ]);
    expect(await digestPushes(reader.browser)).toHaveLength(2);
    expect((await digestNotices(reader.token)).map((notice) => notice.data.digestDate).sort()).toEqual(['2031-02-03', '2031-02-04']);
    expect(await deliveries(reader.userId)).toEqual([
      '2031-02-03#email',
      '2031-02-03#in_app',
      '2031-02-03#web_push',
      '2031-02-04#email',
      '2031-02-04#in_app',
      '2031-02-04#web_push',
    ]);
  });

  it('delivers each channel only where its preference is on, and nothing while the digest is off', async () => {
    // Arrange
    const noEmail = await readerInActiveRoom({ emailEnabled: false });
    const noPush = await readerInActiveRoom({ webPushEnabled: false });
    const noInApp = await readerInActiveRoom({ inAppEnabled: false });
    const off = await readerInActiveRoom({ enabled: false });
    const noAddress = await readerInActiveRoom({ email: null });
    const witness = await readerInActiveRoom();
    const digestDate = '2031-03-01';

    // Act
    await run(digestDate);
    // Users go out in queued jobs of a few each, which a loaded machine finishes in any order: wait for every reader's own.
    const expectedCounts: [Reader, number][] = [
      [witness, 3],
      [noEmail, 2],
      [noPush, 2],
      [noInApp, 2],
      [noAddress, 2],
    ];
    await eventually('every reader’s channels', async () => {
      const counts = await Promise.all(expectedCounts.map(async ([reader]) => (await deliveries(reader.userId)).length));
      return counts.every((count, index) => count === expectedCounts[index]?.[1]);
    });
    // A channel is claimed before it is sent.
    await eventually(
      'the sends behind the claims',
      async () => (await emailsTo(noInApp.email)).length === 1 && (await digestNotices(noEmail.token)).length === 1,
    );

    // Assess
    expect(await deliveries(noEmail.userId)).toEqual([`${digestDate}#in_app`, `${digestDate}#web_push`]);
    expect(await deliveries(noPush.userId)).toEqual([`${digestDate}#email`, `${digestDate}#in_app`]);
    expect(await deliveries(noInApp.userId)).toEqual([`${digestDate}#email`, `${digestDate}#web_push`]);
    expect(await deliveries(off.userId)).toEqual([]);
    expect(await deliveries(noAddress.userId)).toEqual([`${digestDate}#in_app`, `${digestDate}#web_push`]);
    expect(await emailsTo(noEmail.email)).toEqual([]);
    expect(await emailsTo(off.email)).toEqual([]);
    expect(await digestPushes(noPush.browser)).toEqual([]);
    expect(await digestPushes(off.browser)).toEqual([]);
    expect(await emailsTo(noInApp.email)).toHaveLength(1);
    expect(await digestNotices(noInApp.token)).toEqual([]);
    expect(await digestNotices(noEmail.token)).toHaveLength(1);
  });

  it('refuses a bad date or user bound, and members', async () => {
    // Arrange
    const member = await newUser(project);
    const admin = await newUser(project, 'admin', ['admin']);

    // Act
    const badDate = await api('/admin/digest/run', { apiKey: project.apiKey, method: 'POST', body: { digestDate: '2031-02-30' } });
    const tooMany = await api('/admin/digest/run', {
      apiKey: project.apiKey,
      method: 'POST',
      body: { digestDate: '2031-02-03', maxUsers: 100_001 },
    });
    const byMember = await api('/admin/digest/run', { token: member.token, method: 'POST', body: { digestDate: '2031-02-03' } });
    const byAdmin = await api('/admin/digest/run', { token: admin.token, method: 'POST', body: { digestDate: '2031-01-01', maxUsers: 1 } });

    // Assess
    expect(badDate.status).toBe(400);
    expect(badDate.body.error.message).toContain('body.digestDate');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain('body.maxUsers');
    expect(byMember.status).toBe(403);
    expect(byAdmin).toMatchObject({ status: 202, body: { digestDate: '2031-01-01', maxUsers: 1 } });
  });
});

describe('the schedule on the shared runtime', () => {
  it('runs nothing while DAILY_DIGEST_ENABLED is not true, and the admin run delivers whatever it says', async () => {
    // Arrange
    const reader = await readerInActiveRoom();

    // Act
    const fired = await api('/_local/schedules/DailyDigest', { method: 'POST' });
    // The admin run of another date after it: once its delivery is in, anything the schedule queued is too.
    await run('2031-04-01');
    await eventually('the admin run', async () => (await deliveries(reader.userId)).length === 3);

    // Assess
    expect(fired.body).toEqual({ scheduleId: 'DailyDigest', outcome: { ran: false, reason: 'DAILY_DIGEST_ENABLED is not true' } });
    expect((await deliveries(reader.userId)).every((delivery) => delivery.startsWith('2031-04-01#'))).toBe(true);
  });
});

describe('the unsubscribe link', () => {
  it('turns the e-mail off for its user only; a forged or altered link changes nothing', async () => {
    // Arrange
    const reader = await readerInActiveRoom();
    const other = await readerInActiveRoom();
    await run('2031-05-01');
    const [email] = await eventually('the e-mail', async () => {
      const emails = await emailsTo(reader.email);
      return emails.length > 0 && emails;
    });
    const link = new URL(/Stop these e-mails: (\S+)/.exec(email?.body.text ?? '')?.[1] as string);
    const token = link.searchParams.get('token') as string;
    const [version, projectPart, , mac] = token.split('.');
    const otherUser = Buffer.from(other.userId).toString('base64url');

    // Act
    const forged = await api(`/digest/unsubscribe?token=${version}.${projectPart}.${otherUser}.${mac}`);
    const badMac = await api(`/digest/unsubscribe?token=${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`);
    const malformed = await api('/digest/unsubscribe?token=not-a-token');
    const followed = await api(`${link.pathname}${link.search}`);

    // Assess
    expect(forged).toMatchObject({ status: 403, body: { error: { code: 'invalid_unsubscribe_link' } } });
    expect(badMac).toMatchObject({ status: 403, body: { error: { code: 'invalid_unsubscribe_link' } } });
    expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(followed).toMatchObject({ status: 200, body: { emailEnabled: false } });
    expect((await api('/digest/preferences', { token: reader.token })).body).toMatchObject({ enabled: true, emailEnabled: false });
    expect((await api('/digest/preferences', { token: other.token })).body).toMatchObject({ enabled: true, emailEnabled: true });
  });
});
