import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, ISO_TIMESTAMP, newGroupRoom, newUser, type TestProject, uniqueId } from '../support/api';

const isoTimestamp = expect.stringMatching(ISO_TIMESTAMP);

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('members');
});

const user = (prefix?: string, roles?: string[]) => newUser(project, prefix, roles);

const groupRoom = (members?: string[]) => newGroupRoom(project, members);

const memberIds = async (roomId: string) =>
  ((await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey })).body.members as any[]).map((m) => m.userId).sort();

describe('GET /rooms/{roomId}/members', () => {
  it('lists every member with role and join time', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await groupRoom([bob.userId]);

    // Act
    const listed = await api(`/rooms/${roomId}/members`, { token: bob.token });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.members).toHaveLength(2);
    expect(listed.body.members).toEqual(
      expect.arrayContaining([
        { userId: owner.userId, role: 'owner', joinedAt: isoTimestamp },
        { userId: bob.userId, role: 'member', joinedAt: isoTimestamp },
      ]),
    );
  });

  it('pages a large room by 100 by default: the first page carries a nextCursor, the last none', async () => {
    // Prepare: 102 members (the owner, 99 created with the room, 2 added)
    const members = Array.from({ length: 99 }, (_, index) => `m-${String(index).padStart(2, '0')}`);
    const { roomId } = await groupRoom(members);
    for (const userId of ['m-99', 'm-a0']) await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey, body: { userId } });

    // Act
    const first = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    const second = await api(`/rooms/${roomId}/members?cursor=${first.body.nextCursor}`, { apiKey: project.apiKey });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.members).toHaveLength(100);
    expect(first.body.nextCursor).toBe(first.body.members.at(-1).userId);
    expect(second).toMatchObject({ status: 200, body: { nextCursor: null } });
    expect(second.body.members).toHaveLength(2);
    const seen = [...first.body.members, ...second.body.members].map((member: any) => member.userId);
    expect(new Set(seen).size).toBe(102);
  });

  it('walks pages of limit members in user id order with the cursor, and ends without one', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom(['p-1', 'p-2', 'p-3', 'p-4']);

    // Act
    const pages = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await api(`/rooms/${roomId}/members?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        apiKey: project.apiKey,
      });
      expect(page.status).toBe(200);
      pages.push(page.body.members.map((member: any) => member.userId));
      cursor = page.body.nextCursor;
    } while (cursor && pages.length < 10);

    // Assess
    const all = [owner.userId, 'p-1', 'p-2', 'p-3', 'p-4'].sort();
    expect(pages).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4)]);
  });

  it.each(['limit=0', 'limit=501', 'limit=two', 'cursor=a%23b'])('answers 400 validation_failed to %s', async (query) => {
    // Prepare
    const { roomId } = await groupRoom();

    // Act
    const listed = await api(`/rooms/${roomId}/members?${query}`, { apiKey: project.apiKey });

    // Assess
    expect(listed).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Act
    const listed = await api(`/rooms/${uniqueId('missing')}/members`, { apiKey: project.apiKey });

    // Assess
    expect(listed).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describe('POST /rooms/{roomId}/members', () => {
  it('adds a member (201), who may then read the room', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const bob = await user('bob');
    expect((await api(`/rooms/${roomId}/messages`, { token: bob.token })).status).toBe(403);

    // Act
    const added = await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: bob.userId, role: 'member' } });

    // Assess
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ userId: bob.userId, role: 'member', joinedAt: isoTimestamp });
    expect((await api(`/rooms/${roomId}/messages`, { token: bob.token })).status).toBe(200);
    expect((await api('/rooms', { token: bob.token })).body.rooms.map((r: any) => r.id)).toEqual([roomId]);
  });

  it('answers 201 to exactly one of 30 parallel adds of the same user, 200 to the rest, and stores one membership', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const bob = await user('bob');

    // Act
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: bob.userId } })),
    );

    // Assess
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(29);
    expect(new Set(answers.map((answer) => answer.body.joinedAt)).size).toBe(1);
    expect(await memberIds(roomId)).toEqual([bob.userId, owner.userId].sort());
  });

  it('defaults the role to member', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const added = await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: 'dora' } });

    // Assess
    expect(added).toMatchObject({ status: 201, body: { userId: 'dora', role: 'member' } });
  });

  it('answers 200 when the user is already a member, changing the role and keeping the join time', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const first = await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: 'erin', role: 'member' } });

    // Act
    const demoted = await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: 'erin', role: 'guest' } });
    const promoted = await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: 'erin', role: 'member' } });

    // Assess
    expect(demoted).toMatchObject({ status: 200, body: { userId: 'erin', role: 'guest', joinedAt: first.body.joinedAt } });
    expect(promoted).toMatchObject({ status: 200, body: { userId: 'erin', role: 'member', joinedAt: first.body.joinedAt } });
  });

  it('never demotes the room owner', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const admin = await user('admin', ['admin']);

    // Act
    const added = await api(`/rooms/${roomId}/members`, { token: admin.token, body: { userId: owner.userId, role: 'guest' } });

    // Assess
    expect(added).toMatchObject({ status: 200, body: { userId: owner.userId, role: 'owner' } });
    const patched = await api(`/rooms/${roomId}`, { method: 'PATCH', token: owner.token, body: { name: 'still mine' } });
    expect(patched.status).toBe(200);
  });

  it('answers 403 forbidden to a plain member and adds nobody', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await groupRoom([bob.userId]);

    // Act
    const added = await api(`/rooms/${roomId}/members`, { token: bob.token, body: { userId: 'mallory' } });

    // Assess
    expect(added).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(await memberIds(roomId)).toEqual([owner.userId, bob.userId].sort());
  });

  it('answers 409 dm_membership_fixed for a dm, even for an admin', async () => {
    // Prepare
    const alice = await user('alice');
    const admin = await user('admin', ['admin']);
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: ['bob'] } });

    // Act
    const added = await api(`/rooms/${dm.body.id}/members`, { token: admin.token, body: { userId: 'carol' } });

    // Assess
    expect(added).toMatchObject({ status: 409, body: { error: { code: 'dm_membership_fixed' } } });
    expect(await memberIds(dm.body.id)).toEqual([alice.userId, 'bob'].sort());
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Act
    const added = await api(`/rooms/${uniqueId('missing')}/members`, { apiKey: project.apiKey, body: { userId: 'bob' } });

    // Assess
    expect(added).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describe('DELETE /rooms/{roomId}/members/{userId}', () => {
  it('lets a member leave (204): the room disappears from their list and they lose access', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await groupRoom([bob.userId]);
    expect((await api(`/rooms/${roomId}/messages`, { token: bob.token })).status).toBe(200);

    // Act
    const left = await api(`/rooms/${roomId}/members/${bob.userId}`, { method: 'DELETE', token: bob.token });

    // Assess
    expect(left.status).toBe(204);
    expect(left.body).toBeUndefined();
    expect((await api('/rooms', { token: bob.token })).body.rooms).toEqual([]);
    expect(await api(`/rooms/${roomId}/messages`, { token: bob.token })).toMatchObject({
      status: 403,
      body: { error: { code: 'not_a_member' } },
    });
    expect(await memberIds(roomId)).toEqual([owner.userId]);
  });

  it('lets a guest member leave too', async () => {
    // Prepare
    const guest = await user('guest', ['guest']);
    const { owner, roomId } = await groupRoom();
    await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: guest.userId, role: 'guest' } });

    // Act
    const left = await api(`/rooms/${roomId}/members/${guest.userId}`, { method: 'DELETE', token: guest.token });

    // Assess
    expect(left.status).toBe(204);
    expect(await memberIds(roomId)).toEqual([owner.userId]);
  });

  it('lets the room owner remove a member', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await groupRoom([bob.userId]);

    // Act
    const removed = await api(`/rooms/${roomId}/members/${bob.userId}`, { method: 'DELETE', token: owner.token });

    // Assess
    expect(removed.status).toBe(204);
    expect(await memberIds(roomId)).toEqual([owner.userId]);
    expect((await api(`/rooms/${roomId}/messages`, { token: bob.token })).status).toBe(403);
  });

  it('answers 403 forbidden to a plain member removing someone else', async () => {
    // Prepare
    const bob = await user('bob');
    const carol = await user('carol');
    const { owner, roomId } = await groupRoom([bob.userId, carol.userId]);

    // Act
    const removed = await api(`/rooms/${roomId}/members/${carol.userId}`, { method: 'DELETE', token: bob.token });

    // Assess
    expect(removed).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(await memberIds(roomId)).toEqual([owner.userId, bob.userId, carol.userId].sort());
  });

  it('is idempotent: removing a non-member answers 204', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const removed = await api(`/rooms/${roomId}/members/nobody-here`, { method: 'DELETE', token: owner.token });

    // Assess
    expect(removed.status).toBe(204);
    expect(await memberIds(roomId)).toEqual([owner.userId]);
  });

  it('answers 409 dm_membership_fixed for a dm participant leaving', async () => {
    // Prepare
    const alice = await user('alice');
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: ['bob'] } });

    // Act
    const left = await api(`/rooms/${dm.body.id}/members/${alice.userId}`, { method: 'DELETE', token: alice.token });

    // Assess
    expect(left).toMatchObject({ status: 409, body: { error: { code: 'dm_membership_fixed' } } });
    expect(await memberIds(dm.body.id)).toEqual([alice.userId, 'bob'].sort());
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const removed = await api(`/rooms/${uniqueId('missing')}/members/${alice.userId}`, { method: 'DELETE', token: alice.token });

    // Assess
    expect(removed).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});
