import { createHash, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { membershipItemFor } from '#shared/db/membership';
import { type RoomItem, roomKey } from '#shared/db/room';
import { api, createTestProject, ISO_TIMESTAMP, newUser, type TestProject, uniqueId } from '../support/api';
import { raw, table } from '../support/raw-table';

const isoTimestamp = expect.stringMatching(ISO_TIMESTAMP);

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('rooms');
});

/** A fresh user and their member token. */
const user = (prefix?: string, roles?: string[]) => newUser(project, prefix, roles);

describe('POST /rooms', () => {
  it('creates a group room with every field and makes the creator its owner', async () => {
    // Prepare
    const alice = await user('alice');
    const roomId = uniqueId('room');

    // Act
    const created = await api('/rooms', {
      token: alice.token,
      body: { id: roomId, type: 'group', name: 'Team', description: 'The team room', members: ['bob', 'carol'], e2eEnabled: true },
    });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: roomId,
      type: 'group',
      name: 'Team',
      description: 'The team room',
      e2eEnabled: true,
      allowMemberPins: false,
      createdBy: alice.userId,
      createdAt: isoTimestamp,
      updatedAt: created.body.createdAt,
    });
    const members = await api(`/rooms/${roomId}/members`, { token: alice.token });
    expect(members.status).toBe(200);
    expect(members.body.members.map((m: any) => [m.userId, m.role]).sort()).toEqual(
      [
        [alice.userId, 'owner'],
        ['bob', 'member'],
        ['carol', 'member'],
      ].sort(),
    );
  });

  it('generates an id and defaults name, description, members and e2eEnabled', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const created = await api('/rooms', { token: alice.token, body: { type: 'public' } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: 'public', name: null, description: null, e2eEnabled: false });
    expect(created.body.id).toMatch(/^[A-Za-z0-9_.:@-]{1,128}$/);
    const fetched = await api(`/rooms/${created.body.id}`, { token: alice.token });
    expect(fetched.body).toMatchObject({ id: created.body.id, membership: { userId: alice.userId, role: 'owner' } });
  });

  it('answers 409 room_exists for an id already taken, whatever the type, and leaves the room as it was', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomId = uniqueId('room');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', name: 'Original' } });

    // Act
    const again = await api('/rooms', { token: bob.token, body: { id: roomId, type: 'public', name: 'Takeover' } });

    // Assess
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'room_exists' } } });
    const fetched = await api(`/rooms/${roomId}`, { token: alice.token });
    expect(fetched.body).toMatchObject({ type: 'group', name: 'Original', createdBy: alice.userId });
    expect(await api(`/rooms/${roomId}`, { token: bob.token })).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
  });

  it('lets the API key create rooms without an owner', async () => {
    // Prepare
    const roomId = uniqueId('room');

    // Act
    const created = await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type: 'group', members: ['dora'] } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.createdBy).toBe('service');
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members).toEqual([{ userId: 'dora', role: 'member', joinedAt: isoTimestamp }]);
  });

  it('accepts 100 members including the creator and refuses 101', async () => {
    // Prepare
    const alice = await user('alice');
    const others = Array.from({ length: 100 }, (_, index) => `member-${index}`);

    // Act
    const atLimit = await api('/rooms', { token: alice.token, body: { type: 'group', members: others.slice(0, 99) } });
    const overLimit = await api('/rooms', { token: alice.token, body: { type: 'group', members: others } });

    // Assess
    expect(atLimit.status).toBe(201);
    expect((await api(`/rooms/${atLimit.body.id}/members`, { token: alice.token })).body.members).toHaveLength(100);
    expect(overLimit).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.members' }] } } });
  });
});

describe('dm rooms', () => {
  it('have exactly the two members, both plain members, and an id derived from the pair', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');

    // Act
    const created = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.type).toBe('dm');
    const members = await api(`/rooms/${created.body.id}/members`, { token: bob.token });
    expect(members.body.members.map((m: any) => [m.userId, m.role]).sort()).toEqual(
      [
        [alice.userId, 'member'],
        [bob.userId, 'member'],
      ].sort(),
    );
  });

  it('answer 200 with the same room when the pair asks again, from either side', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const first = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });

    // Act
    const again = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [alice.userId, bob.userId] } });
    const fromBob = await api('/rooms', { token: bob.token, body: { type: 'dm', members: [alice.userId] } });

    // Assess
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(fromBob.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(fromBob.body.id).toBe(first.body.id);
  });

  it('are distinct per pair', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const withBob = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [uniqueId('bob')] } });
    const withCarol = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [uniqueId('carol')] } });

    // Assess
    expect(withBob.status).toBe(201);
    expect(withCarol.status).toBe(201);
    expect(withBob.body.id).not.toBe(withCarol.body.id);
  });

  describe.each([
    { variant: 'no other member', members: () => [], field: 'body.members' },
    { variant: 'only the caller', members: (self: string) => [self], field: 'body.members' },
    { variant: 'two other members', members: () => ['bob', 'carol'], field: 'body.members' },
  ])('with $variant', ({ members, field }) => {
    it('answer 400 validation_failed', async () => {
      // Prepare
      const alice = await user('alice');

      // Act
      const created = await api('/rooms', { token: alice.token, body: { type: 'dm', members: members(alice.userId) } });

      // Assess
      expect(created).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field }] } } });
    });
  });

  it('may not be given an id', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const created = await api('/rooms', { token: alice.token, body: { id: uniqueId('dm'), type: 'dm', members: ['bob'] } });

    // Assess
    expect(created).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.id' }] } } });
  });

  it('can be opened by the API key for two users', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');

    // Act
    const created = await api('/rooms', { apiKey: project.apiKey, body: { type: 'dm', members: [alice.userId, bob.userId] } });

    // Assess
    expect(created.status).toBe(201);
    const fromAlice = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });
    expect(fromAlice).toMatchObject({ status: 200, body: { id: created.body.id } });
  });
});

describe('ids the service derives', () => {
  /** What anyone can compute: a dm's id is a hash of its two members. */
  const dmIdOf = (userA: string, userB: string) =>
    `dm_${createHash('sha256').update([userA, userB].sort().join('\n')).digest('hex').slice(0, 32)}`;

  /** A room stored as one made before dm ids were reserved would have been, with its memberships. */
  async function storeRoom(roomId: string, type: RoomItem['type'], members: [userId: string, role: 'owner' | 'member'][]) {
    const now = new Date().toISOString();
    const room: RoomItem = {
      ...roomKey(project.projectId, roomId),
      projectId: project.projectId,
      roomId,
      type,
      e2eEnabled: true,
      e2eKey: randomBytes(32).toString('base64'),
      createdBy: members[0]?.[0] ?? 'service',
      createdAt: now,
      updatedAt: now,
    };
    for (const item of [room, ...members.map(([userId, role]) => membershipItemFor(project.projectId, roomId, userId, role, now))]) {
      await raw.send(new PutCommand({ TableName: table(), Item: item }));
    }
  }

  it.each([
    { variant: "a group room under two other users' dm id, with them as members", type: 'group', id: dmIdOf },
    { variant: 'a public room under a generated room id', type: 'public', id: () => `room_${randomBytes(10).toString('hex')}` },
  ])('refuses $variant with 400 reserved_id and creates nothing', async ({ type, id }) => {
    // Prepare
    const [mallory, alice, bob] = await Promise.all([user('mallory'), user('alice'), user('bob')]);
    const roomId = id(alice.userId, bob.userId);

    // Act
    const claimed = await api('/rooms', { token: mallory.token, body: { id: roomId, type, members: [alice.userId, bob.userId] } });

    // Assess
    expect(claimed).toMatchObject({ status: 400, body: { error: { code: 'reserved_id', details: [{ field: 'body.id' }] } } });
    expect((await api(`/rooms/${roomId}`, { apiKey: project.apiKey })).status).toBe(404);
  });

  it('gives the pair their own dm after a member tried to claim its id, which the claimer cannot read', async () => {
    // Prepare
    const [mallory, alice, bob] = await Promise.all([user('mallory'), user('alice'), user('bob')]);
    await api('/rooms', {
      token: mallory.token,
      body: { id: dmIdOf(alice.userId, bob.userId), type: 'group', members: [alice.userId, bob.userId] },
    });

    // Act
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });

    // Assess
    expect(dm).toMatchObject({ status: 201, body: { id: dmIdOf(alice.userId, bob.userId), type: 'dm', createdBy: alice.userId } });
    const members = await api(`/rooms/${dm.body.id}/members`, { apiKey: project.apiKey });
    expect(members.body.members.map((member: any) => member.userId).sort()).toEqual([alice.userId, bob.userId].sort());
    expect((await api(`/rooms/${dm.body.id}/e2e-key`, { token: mallory.token })).status).toBe(403);
  });

  it("answers 409 dm_id_taken when another room already holds the pair's dm id, and shows nothing of it", async () => {
    // Prepare: a group room under the pair's dm id, as a member could make one before the prefix was reserved
    const [mallory, alice, bob] = await Promise.all([user('mallory'), user('alice'), user('bob')]);
    const roomId = dmIdOf(alice.userId, bob.userId);
    await storeRoom(roomId, 'group', [
      [mallory.userId, 'owner'],
      [alice.userId, 'member'],
      [bob.userId, 'member'],
    ]);

    // Act
    const [fromAlice, fromBob] = [
      await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } }),
      await api('/rooms', { token: bob.token, body: { type: 'dm', members: [alice.userId] } }),
    ];

    // Assess
    for (const answer of [fromAlice, fromBob]) {
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 409,
        body: { error: { code: 'dm_id_taken', message: expect.any(String), traceId: expect.any(String) } },
      });
    }
  });

  it('answers 409 dm_id_taken for a dm-typed room under the id with a third member', async () => {
    // Prepare
    const [mallory, alice, bob] = await Promise.all([user('mallory'), user('alice'), user('bob')]);
    const roomId = dmIdOf(alice.userId, bob.userId);
    await storeRoom(roomId, 'dm', [
      [alice.userId, 'member'],
      [bob.userId, 'member'],
      [mallory.userId, 'member'],
    ]);

    // Act
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });

    // Assess
    expect({ status: dm.status, code: dm.body?.error?.code }).toEqual({ status: 409, code: 'dm_id_taken' });
  });

  it('returns a dm whose create stopped before the second membership, with that membership written', async () => {
    // Prepare
    const [alice, bob] = await Promise.all([user('alice'), user('bob')]);
    const roomId = dmIdOf(alice.userId, bob.userId);
    await storeRoom(roomId, 'dm', [[alice.userId, 'member']]);

    // Act
    const dm = await api('/rooms', { token: bob.token, body: { type: 'dm', members: [alice.userId] } });

    // Assess
    expect(dm).toMatchObject({ status: 200, body: { id: roomId, type: 'dm' } });
    const members = await api(`/rooms/${roomId}/members`, { token: bob.token });
    expect(members.body.members.map((member: any) => [member.userId, member.role]).sort()).toEqual(
      [
        [alice.userId, 'member'],
        [bob.userId, 'member'],
      ].sort(),
    );
  });
});

describe('GET /rooms', () => {
  it("lists the caller's rooms (scope mine by default) and not other users' rooms", async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const mine = await api('/rooms', { token: alice.token, body: { id: uniqueId('a-room'), type: 'group' } });
    const invited = await api('/rooms', { token: bob.token, body: { id: uniqueId('b-room'), type: 'group', members: [alice.userId] } });
    await api('/rooms', { token: bob.token, body: { id: uniqueId('b-only'), type: 'group' } });

    // Act
    const listed = await api('/rooms', { token: alice.token });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.nextCursor).toBeNull();
    expect(listed.body.rooms.map((r: any) => r.id).sort()).toEqual([mine.body.id, invited.body.id].sort());
    expect(listed.body.rooms.find((r: any) => r.id === mine.body.id)).toEqual(mine.body);
  });

  it('lists the public rooms of the project with scope=public, members or not', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const publicRoom = await api('/rooms', { token: alice.token, body: { id: uniqueId('pub'), type: 'public' } });
    const groupRoom = await api('/rooms', { token: alice.token, body: { id: uniqueId('grp'), type: 'group' } });

    // Act
    const listed = await api('/rooms?scope=public&limit=100', { token: bob.token });
    const bobsOwn = await api('/rooms?scope=mine', { token: bob.token });

    // Assess
    expect(listed.status).toBe(200);
    const ids = listed.body.rooms.map((r: any) => r.id);
    expect(ids).toContain(publicRoom.body.id);
    expect(ids).not.toContain(groupRoom.body.id);
    expect(listed.body.rooms.every((r: any) => r.type === 'public')).toBe(true);
    expect(bobsOwn.body.rooms).toEqual([]);
  });

  it('pages with limit and cursor, in room id order, without repeating or skipping rooms', async () => {
    // Prepare
    const alice = await user('alice');
    const ids = ['r-a', 'r-b', 'r-c', 'r-d', 'r-e'].map((suffix) => `${uniqueId('page')}-${suffix}`);
    for (const id of ids) await api('/rooms', { token: alice.token, body: { id, type: 'group' } });

    // Act
    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(`/rooms?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: alice.token });
      expect(page.status).toBe(200);
      pages.push(page.body.rooms.length);
      seen.push(...page.body.rooms.map((r: any) => r.id));
      cursor = page.body.nextCursor;
    } while (cursor && pages.length < 10);

    // Assess
    expect(seen).toEqual([...ids].sort());
    expect(pages.slice(0, 2)).toEqual([2, 2]);
  });
});

describe('GET /rooms/{roomId}', () => {
  it('returns the room and the caller membership, without the e2e key', async () => {
    // Prepare
    const alice = await user('alice');
    const roomId = uniqueId('room');
    const created = await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', name: 'N' } });

    // Act
    const fetched = await api(`/rooms/${roomId}`, { token: alice.token });

    // Assess
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ ...created.body, membership: { userId: alice.userId, role: 'owner', joinedAt: isoTimestamp } });
    expect(JSON.stringify(fetched.body)).not.toContain('e2eKey');
  });

  it('shows a public room to a non-member with membership null, without joining them', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomId = uniqueId('pub');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'public' } });

    // Act
    const fetched = await api(`/rooms/${roomId}`, { token: bob.token });

    // Assess
    expect(fetched.status).toBe(200);
    expect(fetched.body.membership).toBeNull();
    const members = await api(`/rooms/${roomId}/members`, { token: alice.token });
    expect(members.body.members.map((m: any) => m.userId)).toEqual([alice.userId]);
  });

  it('answers 403 not_a_member to a non-member of a group room', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomId = uniqueId('grp');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group' } });

    // Act
    const fetched = await api(`/rooms/${roomId}`, { token: bob.token });

    // Assess
    expect(fetched).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
  });

  describe.each([
    { variant: 'a project admin', roles: ['admin'] },
    { variant: 'a project owner', roles: ['owner'] },
  ])('as $variant who is not a member', ({ roles }) => {
    it('shows a group room with membership null', async () => {
      // Prepare
      const alice = await user('alice');
      const admin = await user('admin', roles);
      const roomId = uniqueId('grp');
      await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group' } });

      // Act
      const fetched = await api(`/rooms/${roomId}`, { token: admin.token });

      // Assess
      expect(fetched.status).toBe(200);
      expect(fetched.body).toMatchObject({ id: roomId, membership: null });
    });
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const fetched = await api(`/rooms/${uniqueId('missing')}`, { token: alice.token });

    // Assess
    expect(fetched).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describe('PATCH /rooms/{roomId}', () => {
  it('lets the room owner change name, description and e2eEnabled', async () => {
    // Prepare
    const alice = await user('alice');
    const roomId = uniqueId('room');
    const created = await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', name: 'Old', description: 'd' } });
    await new Promise((resolve) => setTimeout(resolve, 5));

    // Act
    const patched = await api(`/rooms/${roomId}`, {
      method: 'PATCH',
      token: alice.token,
      body: { name: 'New', description: 'changed', e2eEnabled: true },
    });

    // Assess
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...created.body, name: 'New', description: 'changed', e2eEnabled: true, updatedAt: isoTimestamp });
    expect(patched.body.updatedAt > created.body.updatedAt).toBe(true);
    const fetched = await api(`/rooms/${roomId}`, { token: alice.token });
    expect(fetched.body).toMatchObject({ name: 'New', description: 'changed', e2eEnabled: true });
  });

  it('removes name and description given null and leaves other fields', async () => {
    // Prepare
    const alice = await user('alice');
    const roomId = uniqueId('room');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', name: 'Old', description: 'd', e2eEnabled: true } });

    // Act
    const patched = await api(`/rooms/${roomId}`, { method: 'PATCH', token: alice.token, body: { name: null, description: null } });

    // Assess
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: null, description: null, e2eEnabled: true });
  });

  it('answers 403 forbidden to a plain member and changes nothing', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomId = uniqueId('room');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', name: 'Keep', members: [bob.userId] } });

    // Act
    const patched = await api(`/rooms/${roomId}`, { method: 'PATCH', token: bob.token, body: { name: 'Hijacked' } });

    // Assess
    expect(patched).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await api(`/rooms/${roomId}`, { token: alice.token })).body.name).toBe('Keep');
  });

  it('answers 403 to a dm participant: dm rooms have no owner', async () => {
    // Prepare
    const alice = await user('alice');
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: ['bob'] } });

    // Act
    const patched = await api(`/rooms/${dm.body.id}`, { method: 'PATCH', token: alice.token, body: { e2eEnabled: true } });

    // Assess
    expect(patched).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Prepare
    const admin = await user('admin', ['admin']);

    // Act
    const patched = await api(`/rooms/${uniqueId('missing')}`, { method: 'PATCH', token: admin.token, body: { name: 'x' } });

    // Assess
    expect(patched).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describe('GET /rooms/{roomId}/e2e-key', () => {
  it('gives members the room key: 32 random bytes in base64, stable per room, distinct between rooms', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomA = uniqueId('room');
    const roomB = uniqueId('room');
    await api('/rooms', { token: alice.token, body: { id: roomA, type: 'group', members: [bob.userId], e2eEnabled: true } });
    await api('/rooms', { token: alice.token, body: { id: roomB, type: 'group' } });

    // Act
    const forAlice = await api(`/rooms/${roomA}/e2e-key`, { token: alice.token });
    const forBob = await api(`/rooms/${roomA}/e2e-key`, { token: bob.token });
    const otherRoom = await api(`/rooms/${roomB}/e2e-key`, { token: alice.token });

    // Assess
    expect(forAlice.status).toBe(200);
    expect(forAlice.body).toEqual({ roomId: roomA, e2eKey: expect.any(String), e2eEnabled: true });
    expect(Buffer.from(forAlice.body.e2eKey, 'base64')).toHaveLength(32);
    expect(Buffer.from(forAlice.body.e2eKey, 'base64').toString('base64')).toBe(forAlice.body.e2eKey);
    expect(forBob.body).toEqual(forAlice.body);
    expect(otherRoom.body.e2eEnabled).toBe(false);
    expect(otherRoom.body.e2eKey).not.toBe(forAlice.body.e2eKey);
  });

  it('reports e2eEnabled as changed by PATCH', async () => {
    // Prepare
    const alice = await user('alice');
    const roomId = uniqueId('room');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group' } });
    const before = await api(`/rooms/${roomId}/e2e-key`, { token: alice.token });

    // Act
    await api(`/rooms/${roomId}`, { method: 'PATCH', token: alice.token, body: { e2eEnabled: true } });
    const after = await api(`/rooms/${roomId}/e2e-key`, { token: alice.token });

    // Assess
    expect(before.body.e2eEnabled).toBe(false);
    expect(after.body).toEqual({ ...before.body, e2eEnabled: true });
  });

  it('answers 403 guest_forbidden to a guest member, and the key once promoted to member', async () => {
    // Prepare
    const alice = await user('alice');
    const guest = await user('guest', ['guest']);
    const roomId = uniqueId('room');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group' } });
    await api(`/rooms/${roomId}/members`, { token: alice.token, body: { userId: guest.userId, role: 'guest' } });

    // Act
    const asGuest = await api(`/rooms/${roomId}/e2e-key`, { token: guest.token });
    await api(`/rooms/${roomId}/members`, { token: alice.token, body: { userId: guest.userId, role: 'member' } });
    const promoted = await api(`/rooms/${roomId}/e2e-key`, { token: guest.token });

    // Assess
    expect(asGuest).toMatchObject({ status: 403, body: { error: { code: 'guest_forbidden' } } });
    expect(promoted.status).toBe(200);
  });

  it('answers 403 guest_forbidden to a guest session that joined a public room on its own', async () => {
    // Prepare
    const alice = await user('alice');
    const guest = await user('guest', ['guest']);
    const roomId = uniqueId('pub');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'public' } });
    await api(`/rooms/${roomId}/messages`, { token: guest.token });

    // Act
    const key = await api(`/rooms/${roomId}/e2e-key`, { token: guest.token });

    // Assess
    expect(key).toMatchObject({ status: 403, body: { error: { code: 'guest_forbidden' } } });
  });

  describe.each([
    { variant: 'group', type: 'group' },
    { variant: 'public', type: 'public' },
  ])('for a non-member of a $variant room', ({ type }) => {
    it('answers 403 not_a_member', async () => {
      // Prepare
      const alice = await user('alice');
      const bob = await user('bob');
      const roomId = uniqueId('room');
      await api('/rooms', { token: alice.token, body: { id: roomId, type } });

      // Act
      const key = await api(`/rooms/${roomId}/e2e-key`, { token: bob.token });

      // Assess
      expect(key).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    });
  });

  it('needs a user JWT: the API key gets 401 missing_credentials', async () => {
    // Prepare
    const roomId = uniqueId('room');
    await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type: 'group' } });

    // Act
    const key = await api(`/rooms/${roomId}/e2e-key`, { apiKey: project.apiKey });

    // Assess
    expect(key).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const key = await api(`/rooms/${uniqueId('missing')}/e2e-key`, { token: alice.token });

    // Assess
    expect(key).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describe('public rooms', () => {
  it('let any project member read, adding them to the membership on first read', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomId = uniqueId('pub');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'public' } });
    const posted = await api('/messages', { token: alice.token, body: { roomId, content: 'welcome' } });

    // Act
    const history = await api(`/rooms/${roomId}/messages`, { token: bob.token });

    // Assess
    expect(history.status).toBe(200);
    expect(history.body.messages).toEqual([posted.body]);
    const mine = await api('/rooms', { token: bob.token });
    expect(mine.body.rooms.map((r: any) => r.id)).toEqual([roomId]);
    const members = await api(`/rooms/${roomId}/members`, { token: alice.token });
    expect(members.body.members).toContainEqual({ userId: bob.userId, role: 'member', joinedAt: isoTimestamp });
    expect((await api(`/rooms/${roomId}`, { token: bob.token })).body.membership).toMatchObject({ role: 'member' });
  });

  it('let any project member post, adding them to the membership', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const roomId = uniqueId('pub');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'public' } });

    // Act
    const posted = await api('/messages', { token: bob.token, body: { roomId, content: 'hi all' } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body.userId).toBe(bob.userId);
    const members = await api(`/rooms/${roomId}/members`, { token: alice.token });
    expect(members.body.members.map((m: any) => m.userId).sort()).toEqual([alice.userId, bob.userId].sort());
  });

  it('add a guest session as a guest member', async () => {
    // Prepare
    const alice = await user('alice');
    const guest = await user('guest', ['guest']);
    const roomId = uniqueId('pub');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'public' } });

    // Act
    const posted = await api('/messages', { token: guest.token, body: { roomId, content: 'hello from a guest' } });

    // Assess
    expect(posted.status).toBe(201);
    const members = await api(`/rooms/${roomId}/members`, { token: alice.token });
    expect(members.body.members).toContainEqual({ userId: guest.userId, role: 'guest', joinedAt: isoTimestamp });
  });

  it('keep the creator as owner when they read their own room', async () => {
    // Prepare
    const alice = await user('alice');
    const roomId = uniqueId('pub');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'public' } });

    // Act
    await api(`/rooms/${roomId}/messages`, { token: alice.token });

    // Assess
    expect((await api(`/rooms/${roomId}`, { token: alice.token })).body.membership.role).toBe('owner');
  });
});

describe('group rooms', () => {
  describe.each([
    { action: 'read', call: (roomId: string, token: string) => api(`/rooms/${roomId}/messages`, { token }) },
    { action: 'post', call: (roomId: string, token: string) => api('/messages', { token, body: { roomId, content: 'let me in' } }) },
    {
      action: 'post by path',
      call: (roomId: string, token: string) => api(`/rooms/${roomId}/messages`, { token, body: { content: 'let me in' } }),
    },
    { action: 'list members', call: (roomId: string, token: string) => api(`/rooms/${roomId}/members`, { token }) },
  ])('a non-member trying to $action', ({ call }) => {
    it('gets 403 not_a_member and does not join', async () => {
      // Prepare
      const alice = await user('alice');
      const bob = await user('bob');
      const roomId = uniqueId('grp');
      await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group' } });

      // Act
      const response = await call(roomId, bob.token);

      // Assess
      expect(response).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
      const members = await api(`/rooms/${roomId}/members`, { token: alice.token });
      expect(members.body.members.map((m: any) => m.userId)).toEqual([alice.userId]);
    });
  });

  it('may be read by a project admin who is not a member, without joining', async () => {
    // Prepare
    const alice = await user('alice');
    const admin = await user('admin', ['admin']);
    const roomId = uniqueId('grp');
    await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group' } });
    const posted = await api('/messages', { token: alice.token, body: { roomId, content: 'private' } });

    // Act
    const history = await api(`/rooms/${roomId}/messages`, { token: admin.token });

    // Assess
    expect(history.status).toBe(200);
    expect(history.body.messages).toEqual([posted.body]);
    const members = await api(`/rooms/${roomId}/members`, { token: admin.token });
    expect(members.body.members.map((m: any) => m.userId)).toEqual([alice.userId]);
  });
});
