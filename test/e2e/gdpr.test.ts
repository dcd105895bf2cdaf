import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privacyAreas } from '#domain/privacy/areas';
import { eraseSubject } from '#domain/privacy/erasure';
import { type ApiResponse, api, createTestProject, runtime, type TestProject, uniqueId } from '../support/api';
import { fcmToken, newSubscription } from '../support/push/fixtures';
import { raw, table } from '../support/raw-table';
import { eventually } from '../support/webhook-receiver';
import { connectUser, type RoomSocket } from '../support/ws';

/**
 * GDPR by the JWT `sub` on the shared runtime, over real HTTP and DynamoDB Local: the token's `sub`
 * rule, an export of a subject with data in every area (and nothing of anyone else), the staged
 * export's links, the erasure checked against a raw Scan of the table (nothing of the subject left
 * but tombstones and transient event records, another user's and another project's items
 * unchanged), an erasure killed halfway and finished by the next call, and the repeat answering the
 * same done state. The shared runtime's `GDPR_EXPORT_INLINE_MAX_BYTES` is 32 KB
 * (`test/support/global-setup.ts`), so a modest history takes the staged path.
 */

type Item = Record<string, unknown>;
const PASSWORD = 'correct horse battery';
const sockets: RoomSocket[] = [];

const json = (value: unknown) => JSON.stringify(value, (_, v) => (v instanceof Set ? [...v].sort() : v));
const mentions = (item: Item, id: string) => json(item).includes(id);
const keyOf = (item: Item) => `${item.pk} ${item.sk}`;

async function scanTable(): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await raw.send(new ScanCommand({ TableName: table(), ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * Records the erasure documents as staying until their TTL: an outbox event (`EVT#`, 2 days) names
 * the user it announces (the erasure's own `room.member_left` events must, for push and realtime
 * to act on them), a subscriber's claim on it, and a push record (`PUSHREC#`, 30 days: the push
 * dispatcher may still be delivering one of the subject's messages while the erasure runs).
 */
const isTransientEventRecord = (item: Item) =>
  String(item.sk).startsWith('EVT#') || String(item.sk).startsWith('DONE#') || String(item.pk).includes('#PUSHREC#');
/**
 * The keys of project A's items that still name `userId` and are not `allowed` to, once the
 * erasure's events have been handled (empty), or as found after 10 s.
 */
async function subjectItemsLeft(what: string, userId: string, allowed: (item: Item) => boolean): Promise<string[]> {
  const left = async () => itemsOfProject(await scanTable(), a.projectId).filter((item) => mentions(item, userId) && !allowed(item));
  return eventually(
    what,
    async () => {
      const found = await left();
      return found.length === 0 ? [] : false;
    },
    10_000,
  ).catch(async () => (await left()).map(keyOf));
}

/** A message turned into a tombstone by the erasure. */
const isTombstone = (item: Item) => String(item.sk).startsWith('MSG#') && typeof item.erasedAt === 'string';
/**
 * The project's audit log keeps the subject's id until its TTL, the erasure's own event included
 * (docs/audit.md, "The GDPR exception"); every privileged call the suite makes appends to it.
 */
const isAuditEvent = (item: Item) => String(item.pk).endsWith('#AUDIT');
/** The per-minute figures and alerts (docs/stats.md): counts, no user id, summed a moment after each request. */
const isStatsRecord = (item: Item) => /#(STATS|ALERTS)$/.test(String(item.pk));
/** What the suites' own calls move while a test runs: rate-limit windows, figures, the audit log. */
const isVolatile = (item: Item) =>
  String(item.pk).includes('#RL#') || isTransientEventRecord(item) || isAuditEvent(item) || isStatsRecord(item);
const inProjects = (item: Item, ...projectIds: string[]) =>
  projectIds.some((id) => String(item.pk) === `P#${id}` || String(item.pk).startsWith(`P#${id}#`));

const itemsOfProject = (items: Item[], projectId: string) =>
  items.filter((item) => String(item.pk).startsWith(`P#${projectId}#`) || item.pk === `P#${projectId}`);

async function post(path: string, token: string, body: unknown): Promise<ApiResponse> {
  const response = await api(path, { token, body });
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response;
}

/** A user of `project` with data in every area; answers what was made, to look for it in exports and scans. */
async function seedSubject(project: TestProject, userId: string, options: { socket?: boolean } = {}) {
  const other = uniqueId('other');
  const [token, otherToken] = await Promise.all([project.token(userId, ['moderator']), project.token(other)]);
  await api(`/users/${userId}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: PASSWORD } });
  await api(`/users/${other}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: PASSWORD } });
  const roomId = uniqueId('room');
  await post('/rooms', token, { id: roomId, type: 'group', name: 'Subject room', members: [other] });
  const dmId = (await post('/rooms', token, { type: 'dm', members: [other] })).body.id as string;
  const marker = uniqueId('said');
  const first = (await post('/messages', token, { roomId, content: `first words ${marker}` })).body;
  const flagged = (await post('/messages', token, { roomId, content: `this is gdpr-flagged ${marker}` })).body;
  const inDm = (await post('/messages', token, { roomId: dmId, content: `dm words ${marker}` })).body;
  const otherMarker = uniqueId('other-said');
  const reply = (await post('/messages', otherToken, { roomId, content: `a reply ${otherMarker}`, parent_id: first.id })).body;
  const reacted = await api(`/messages/${first.id}/reactions/${encodeURIComponent('👍')}?roomId=${roomId}`, { method: 'PUT', token });
  const reported = await post(`/messages/${reply.id}/reports`, token, { roomId, reason: 'other', note: `reported by ${marker}` });
  if (reacted.status !== 201 || reported.status !== 201) throw new Error(`reaction ${reacted.status}, report ${reported.status}`);
  const device = fcmToken();
  await post('/push/devices', token, { platform: 'fcm', token: device });
  const subscription = newSubscription();
  await post('/push/web/subscribe', token, subscription);
  const otherSubscription = newSubscription();
  await post('/push/web/subscribe', otherToken, otherSubscription);
  await post(`/users/${userId}/watchlist`, token, { type: 'room', targetId: roomId });
  await post(`/users/${userId}/watchlist`, token, { type: 'user', targetId: other });
  await post(`/users/${other}/watchlist`, otherToken, { type: 'user', targetId: userId });
  const handoff = (await post(`/rooms/${roomId}/handoff`, token, { note: 'taking over' })).body;
  const email = `${userId}@example.com`;
  const digest = await api('/digest/preferences', { method: 'PATCH', token, body: { enabled: true, email, emailEnabled: true } });
  if (digest.status !== 200) throw new Error(`digest preferences: ${digest.status} ${JSON.stringify(digest.body)}`);
  // The reply notifies the subject and the dm notifies the other user, through the outbox subscriber.
  await eventually('the reply notification and feed entry', async () => {
    const [inbox, feed] = await Promise.all([api('/notifications', { token }), api('/user/activity-feed', { token })]);
    return inbox.body.notifications?.length > 0 && feed.body.entries?.length > 0;
  });
  await eventually(
    'the dm notification of the other user',
    async () => (await api('/notifications', { token: otherToken })).body.notifications?.length > 0,
  );
  if (options.socket) sockets.push(await connectUser(userId, token));
  return {
    userId,
    token,
    email,
    other,
    otherToken,
    roomId,
    dmId,
    marker,
    otherMarker,
    first,
    flagged,
    inDm,
    reply,
    device,
    subscription,
    otherSubscription,
    handoff,
  };
}

let a: TestProject;
let b: TestProject;
let adminId: string;
/** A token of the admin acting for `subject`, as `POST /auth/token` mints it. */
const actingFor = async (project: TestProject, admin: string, subject: string, roles = ['admin']) => {
  const minted = await api('/auth/token', { apiKey: project.apiKey, body: { userId: admin, roles, sub: subject } });
  if (minted.status !== 201) throw new Error(`token: ${minted.status} ${JSON.stringify(minted.body)}`);
  return minted.body.token as string;
};

beforeAll(async () => {
  [a, b] = await Promise.all([createTestProject('gdpr-a'), createTestProject('gdpr-b')]);
  adminId = uniqueId('admin');
  await Promise.all(
    [a, b].map((project) =>
      api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['gdpr-flagged'] } }),
    ),
  );
});
afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
});

describe('the token `sub`', () => {
  it('is the userId in a token minted without one', async () => {
    // Act
    const minted = await api('/auth/token', { apiKey: a.apiKey, body: { userId: 'plain-user' } });

    // Assess
    expect(minted.status).toBe(201);
    expect(decodeJwt(minted.body.token)).toMatchObject({ sub: 'plain-user', userId: 'plain-user' });
  });

  it('may name another subject in an admin or owner token, and is refused (400 naming body.sub) in a member token', async () => {
    // Act
    const admin = await api('/auth/token', { apiKey: a.apiKey, body: { userId: 'an-admin', roles: ['admin'], sub: 'a-subject' } });
    const owner = await api('/auth/token', { apiKey: a.apiKey, body: { userId: 'an-owner', roles: ['owner'], sub: 'a-subject' } });
    const member = await api('/auth/token', { apiKey: a.apiKey, body: { userId: 'a-member', roles: ['member'], sub: 'a-subject' } });
    const own = await api('/auth/token', { apiKey: a.apiKey, body: { userId: 'a-member', sub: 'a-member' } });
    const reserved = await api('/auth/token', { apiKey: a.apiKey, body: { userId: 'an-admin', roles: ['admin'], sub: 'erased:user' } });

    // Assess
    expect(admin.status).toBe(201);
    expect(decodeJwt(admin.body.token)).toMatchObject({ sub: 'a-subject', userId: 'an-admin' });
    expect(owner.status).toBe(201);
    expect(member).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.sub' }] } } });
    expect(own.status).toBe(201);
    expect(reserved).toMatchObject({ status: 400, body: { error: { code: 'reserved_id', details: [{ field: 'body.sub' }] } } });
  });

  it("refuses a member's own-signed token naming someone else's sub on the GDPR routes (403 subject_forbidden), and lets an admin act for them", async () => {
    // Prepare
    const victim = await seedSubject(a, uniqueId('victim'));
    const forged = await new SignJWT({ projectId: a.projectId, userId: 'nosy-member', roles: ['member'] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(victim.userId)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(a.signingSecret));

    // Act
    const byMember = await api('/gdpr/export', { token: forged });
    const byAdmin = await api('/gdpr/export', { token: await actingFor(a, 'helpful-admin', victim.userId) });

    // Assess
    expect(byMember).toMatchObject({ status: 403, body: { error: { code: 'subject_forbidden' } } });
    expect(json(byMember.body)).not.toContain(victim.marker);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.subject).toEqual({ projectId: a.projectId, userId: victim.userId });
    expect(json(byAdmin.body)).toContain(victim.marker);
  });
});

describe('GET /gdpr/export of a subject with data in every area', () => {
  let seeded: Awaited<ReturnType<typeof seedSubject>>;
  let exported: ApiResponse;
  let text: string;
  let bMarker: string;

  beforeAll(async () => {
    const userId = uniqueId('subject');
    seeded = await seedSubject(a, userId, { socket: true });
    // The same user id in project B, with data of its own.
    const bToken = await b.token(userId);
    bMarker = uniqueId('b-said');
    const bRoom = uniqueId('b-room');
    await post('/rooms', bToken, { id: bRoom, type: 'group' });
    await post('/messages', bToken, { roomId: bRoom, content: `project b ${bMarker}` });
    exported = await api('/gdpr/export', { token: seeded.token });
    text = json(exported.body);
  });

  it('answers a JSON attachment', () => {
    // Assess
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('application/json');
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="gdpr-export-ex_[A-Za-z0-9]+\.json"$/);
    expect(exported.body.subject).toEqual({ projectId: a.projectId, userId: seeded.userId });
  });

  it('holds the profile and credential metadata, never the password hash', () => {
    // Assess
    expect(exported.body.credentials).toEqual({ hasPassword: true, roles: ['member'], updatedAt: expect.any(String) });
    expect(text).not.toContain('scrypt$');
    expect(text).not.toContain('passwordHash');
  });

  it('holds the memberships with their roles, dm included', () => {
    // Assess
    expect(exported.body.memberships).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ roomId: seeded.roomId, role: 'owner', roomType: 'group', createdTheRoom: true }),
        expect.objectContaining({ roomId: seeded.dmId, roomType: 'dm' }),
      ]),
    );
    expect(exported.body.memberships).toHaveLength(2);
  });

  it('holds every message the subject wrote, and their moderation flags', () => {
    // Assess
    const ids = (exported.body.messages as any[]).map((message) => message.id).sort();
    expect(ids).toEqual([seeded.first.id, seeded.flagged.id, seeded.inDm.id].sort());
    expect(text).toContain(`first words ${seeded.marker}`);
    expect(exported.body.moderationFlags).toEqual([expect.objectContaining({ messageId: seeded.flagged.id, matchedTerm: 'gdpr-flagged' })]);
  });

  it('holds the reactions and the reports the subject made', () => {
    // Assess
    expect(exported.body.reactions).toEqual([
      { roomId: seeded.roomId, messageId: seeded.first.id, emoji: '👍', createdAt: expect.any(String) },
    ]);
    expect(exported.body.reports).toEqual([
      expect.objectContaining({
        messageId: seeded.reply.id,
        reporterId: seeded.userId,
        reason: 'other',
        note: `reported by ${seeded.marker}`,
      }),
    ]);
  });

  it('holds devices and web push subscriptions with tokens and endpoints masked', () => {
    // Assess
    expect(exported.body.push.devices).toEqual([expect.objectContaining({ platform: 'fcm' })]);
    expect(exported.body.push.webPushSubscriptions).toEqual([expect.objectContaining({ endpointHost: 'push.example.com' })]);
    expect(text).not.toContain(seeded.device);
    expect(text).not.toContain(seeded.subscription.endpoint);
    expect(text).not.toContain(seeded.subscription.keys.auth);
  });

  it('holds the watchlist, the agent task and handoff the subject took, and the open connection', () => {
    // Assess
    expect(exported.body.watchlist).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'room', targetId: seeded.roomId }),
        expect.objectContaining({ type: 'user', targetId: seeded.other }),
      ]),
    );
    expect(exported.body.agentWork.tasks).toEqual([expect.objectContaining({ roomId: seeded.roomId, claimedBy: seeded.userId })]);
    expect(exported.body.agentWork.handoffs).toEqual([expect.objectContaining({ handoffId: seeded.handoff.handoffId })]);
    expect(exported.body.connections).toEqual([expect.objectContaining({ channel: 'user' })]);
  });

  it('holds the notifications, the activity feed and the digest preferences', () => {
    // Assess
    expect(exported.body.notifications).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'reply', messageId: seeded.reply.id }),
        expect.objectContaining({ kind: 'handoff_assigned' }),
      ]),
    );
    expect(exported.body.activityFeed).toEqual([expect.objectContaining({ kind: 'reply', actorId: seeded.other })]);
    expect(exported.body.digest.preferences).toMatchObject({ enabled: true, email: seeded.email, emailEnabled: true });
  });

  it("holds nothing of another user or another project (the other's reply and subscription, project B's message)", () => {
    // Assess: the reply's words reach the subject only as their own notification and feed entry of it
    const { notifications, activityFeed, ...rest } = exported.body;
    expect(json(rest)).not.toContain(seeded.otherMarker);
    expect(json({ notifications, activityFeed })).toContain(seeded.otherMarker);
    expect(text).not.toContain(seeded.otherSubscription.endpoint);
    expect(text).not.toContain(bMarker);
  });
});

describe('a large export', () => {
  let subject: { userId: string; token: string };
  let staged: ApiResponse;

  beforeAll(async () => {
    const userId = uniqueId('big');
    subject = { userId, token: await a.token(userId) };
    const roomId = uniqueId('room');
    await post('/rooms', subject.token, { id: roomId, type: 'group' });
    for (let index = 0; index < 24; index++) {
      await post('/messages', subject.token, { roomId, content: `${String(index).padStart(2, '0')} ${'é😀x'.repeat(500)}` });
    }
    staged = await api('/gdpr/export', { token: subject.token });
  });

  it('answers signed short-lived links instead of the body, whose parts joined are the export', async () => {
    // Act
    const parts = await Promise.all(
      (staged.body.parts as string[]).map(async (part) => {
        const response = await fetch(`${runtime().baseUrl}${part}`);
        return { status: response.status, headers: response.headers, text: await response.text() };
      }),
    );
    const joined = JSON.parse(parts.map((part) => part.text).join(''));

    // Assess
    expect(staged.status).toBe(200);
    expect(staged.body).toMatchObject({ status: 'staged', exportId: expect.stringMatching(/^ex_/), bytes: expect.any(Number) });
    expect(staged.body.bytes).toBeGreaterThan(32_768);
    expect(Date.parse(staged.body.expiresAt) - Date.now()).toBeLessThanOrEqual(900_000);
    expect(parts.map((part) => part.status)).toEqual(staged.body.parts.map(() => 200));
    expect(parts[0]?.headers.get('content-disposition')).toMatch(/^attachment; filename="gdpr-export-ex_\w+\.part-0\.json"$/);
    expect(joined.subject).toEqual({ projectId: a.projectId, userId: subject.userId });
    expect(joined.messages).toHaveLength(24);
    expect(joined.messages[23].content).toBe(`23 ${'é😀x'.repeat(500)}`);
  });

  it('refuses an altered link (403 export_link_invalid) and one naming a part past the end (404 export_not_found)', async () => {
    // Prepare
    const [link] = staged.body.parts as string[];
    const url = new URL(link ?? '', 'http://x');
    const token = url.searchParams.get('token') ?? '';
    const [payload, mac] = token.split('.');
    const fields = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
    const longer = Buffer.from(JSON.stringify([fields[0], fields[1], fields[2], fields[3] + 3600])).toString('base64url');

    // Act
    const extended = await api(`/gdpr/export/download?token=${longer}.${mac}&part=0`);
    const pastEnd = await api(`/gdpr/export/download?token=${token}&part=99`);

    // Assess
    expect(extended).toMatchObject({ status: 403, body: { error: { code: 'export_link_invalid' } } });
    expect(pastEnd).toMatchObject({ status: 404, body: { error: { code: 'export_not_found' } } });
  });

  it('is gone once its subject is erased: the link answers 404 export_not_found', async () => {
    // Act
    const erased = await api('/gdpr/delete', { method: 'DELETE', token: await actingFor(a, adminId, subject.userId) });
    const after = await api((staged.body.parts as string[])[0] ?? '');

    // Assess
    expect(erased.body.status).toBe('done');
    expect(after).toMatchObject({ status: 404, body: { error: { code: 'export_not_found' } } });
  });
});

describe('DELETE /gdpr/delete', () => {
  let seeded: Awaited<ReturnType<typeof seedSubject>>;
  let before: Item[];
  let first: ApiResponse;
  let closedSocket: Promise<unknown>;
  let bItemsOfSameId: () => Promise<Item[]>;

  beforeAll(async () => {
    const userId = uniqueId('erased');
    seeded = await seedSubject(a, userId, { socket: true });
    closedSocket = (sockets.at(-1) as RoomSocket).closed;
    // The same user id in project B, which must keep everything.
    const bToken = await b.token(userId);
    const bRoom = uniqueId('b-room');
    await post('/rooms', bToken, { id: bRoom, type: 'group' });
    await post('/messages', bToken, { roomId: bRoom, content: 'project b keeps this' });
    await api(`/users/${userId}/credentials`, { method: 'PUT', apiKey: b.apiKey, body: { password: PASSWORD } });
    bItemsOfSameId = async () => itemsOfProject(await scanTable(), b.projectId).filter((item) => !isVolatile(item));
    // Let the setup's events (rosters, presence) settle before the snapshot.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    before = await scanTable();
    first = await api('/gdpr/delete', { method: 'DELETE', token: await actingFor(a, adminId, userId) });
  });

  it('answers the done erasure with what each step erased', () => {
    // Assess
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      erasureId: expect.stringMatching(/^er_/),
      status: 'done',
      attempts: 1,
      completedAt: expect.any(String),
    });
    expect(Object.keys(first.body.steps)).toEqual(privacyAreas.map((area) => area.id));
    expect(first.body.steps).toMatchObject({
      messages: 4,
      memberships: 2,
      push: 2,
      credentials: 1,
      connections: 1,
      digest: 1,
      copiesInOthersInboxes: 1,
      reactions: 1,
      reports: 1,
      notifications: expect.any(Number),
      activityFeed: 1,
    });
    expect(first.body.steps.notifications).toBeGreaterThanOrEqual(3);
  });

  it("leaves no item of the project holding the subject's id, but tombstones and transient event records", async () => {
    // Act
    const left = await subjectItemsLeft(
      'the erasure events handled',
      seeded.userId,
      (item) => isTransientEventRecord(item) || isAuditEvent(item),
    );

    // Assess
    expect(left).toEqual([]);
  });

  it("empties the copies of the subject's words in the other user's inbox, keeping their unread count", async () => {
    // Act
    const inbox = (await api('/notifications', { token: seeded.otherToken })).body;

    // Assess
    expect(inbox.notifications).toEqual([expect.objectContaining({ kind: 'dm', title: 'A message of an erased user', body: '' })]);
    expect(inbox.unreadCount).toBe(1);
    expect(json(inbox)).not.toContain(seeded.marker);
  });

  it('keeps a tombstone of each message, so the reply keeps its parent and history its order', async () => {
    // Act
    const history = (await api(`/rooms/${seeded.roomId}/messages`, { token: seeded.otherToken })).body.messages as any[];

    // Assess
    const tombstone = history.find((message) => message.id === seeded.first.id);
    expect(tombstone).toMatchObject({ userId: 'erased:user', content: '', attachments: [], clientMessageId: null });
    expect(history.find((message) => message.id === seeded.reply.id)).toMatchObject({ parent_id: seeded.first.id, userId: seeded.other });
    expect(json(history)).not.toContain(seeded.marker);
  });

  it("leaves another user's items and the other project's items as they were", async () => {
    // Act
    const after = new Map((await scanTable()).map((item) => [keyOf(item), json(item)]));

    // Assess
    const untouched = before.filter(
      (item) =>
        inProjects(item, a.projectId, b.projectId) &&
        !mentions(item, seeded.userId) &&
        !isVolatile(item) &&
        item.pk !== `P#${a.projectId}#PRIVACY`,
    );
    const changed = untouched.filter((item) => after.get(keyOf(item)) !== json(item)).map(keyOf);
    expect(changed).toEqual([]);
    expect(
      itemsOfProject(before, b.projectId)
        .filter((item) => !isVolatile(item))
        .map(json)
        .sort(),
    ).toEqual((await bItemsOfSameId()).map(json).sort());
    expect(untouched.some((item) => mentions(item, seeded.otherMarker))).toBe(true);
  });

  it('closes the open connection, ends sign-in and keeps an audit record without personal data', async () => {
    // Act
    const signIn = await api('/auth/signin', { body: { projectId: a.projectId, userId: seeded.userId, password: PASSWORD } });
    const bSignIn = await api('/auth/signin', { body: { projectId: b.projectId, userId: seeded.userId, password: PASSWORD } });
    const audit = (await scanTable()).filter((item) => item.pk === `P#${a.projectId}#PRIVACY` && String(item.sk).startsWith('ERASURE#'));

    // Assess
    await expect(closedSocket).resolves.toBeDefined();
    expect(signIn.status).toBe(401);
    expect(bSignIn.status).toBe(200);
    const record = audit.find((item) => item.erasureId === first.body.erasureId);
    expect(record).toMatchObject({ state: 'done', requestedBy: adminId });
    expect(json(record)).not.toContain(seeded.userId);
  });

  it('answers the same done state to a second call, changing nothing', async () => {
    // Prepare
    const snapshot = (await scanTable())
      .filter((item) => !isVolatile(item))
      .map(json)
      .sort();

    // Act
    const second = await api('/gdpr/delete', { method: 'DELETE', token: await actingFor(a, adminId, seeded.userId) });

    // Assess
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(
      (await scanTable())
        .filter((item) => !isVolatile(item))
        .map(json)
        .sort(),
    ).toEqual(snapshot);
  });

  it('is refused to a member (403 forbidden), even for their own sub', async () => {
    // Prepare
    const member = uniqueId('member');
    const token = await a.token(member);
    await post('/rooms', token, { id: uniqueId('room'), type: 'group' });

    // Act
    const refused = await api('/gdpr/delete', { method: 'DELETE', token });

    // Assess
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await api('/rooms', { token })).body.rooms).toHaveLength(1);
  });
});

describe('an erasure killed halfway', () => {
  it('stays running with the steps before the crash done, and the next call finishes it', async () => {
    // Prepare
    const seeded = await seedSubject(a, uniqueId('crashed'));
    const crashAt = privacyAreas.findIndex((area) => area.id === 'messages');
    const killed = privacyAreas.map((area, index) =>
      index === crashAt
        ? {
            ...area,
            erase: async (subject: Parameters<typeof area.erase>[0]) => {
              await area.erase(subject);
              throw new Error('killed after the messages step did its work, before it was recorded');
            },
          }
        : area,
    );

    // Act
    const crashed = await eraseSubject(a.projectId, seeded.userId, adminId, { areas: killed }).catch((error: Error) => error);
    const record = (await scanTable()).find((item) => item.pk === `P#${a.projectId}#PRIVACY` && item.state === 'running');
    const membersMeanwhile = (await api(`/rooms/${seeded.roomId}/members`, { token: seeded.otherToken })).body.members as any[];
    const resumed = await api('/gdpr/delete', { method: 'DELETE', token: await actingFor(a, adminId, seeded.userId) });

    // Assess
    expect(crashed).toBeInstanceOf(Error);
    expect(Object.keys(record?.steps as Item).sort()).toEqual(
      privacyAreas
        .slice(0, crashAt)
        .map((area) => area.id)
        .sort(),
    );
    expect(membersMeanwhile.map((member) => member.userId)).toContain(seeded.userId);
    expect(resumed.body).toMatchObject({ status: 'done', attempts: 2, erasureId: record?.erasureId });
    // The messages the crashed run had erased are counted by neither run, but none is left.
    expect(resumed.body.steps.messages).toBe(0);
    const left = await subjectItemsLeft(
      'the resumed erasure events handled',
      seeded.userId,
      (item) => isTransientEventRecord(item) || isTombstone(item) || isAuditEvent(item),
    );
    expect(left).toEqual([]);
  });
});
