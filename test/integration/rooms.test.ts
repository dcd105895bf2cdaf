import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '#domain/projects/projects';
import { accessRoom, addMember, createRoom, listRooms, removeMember } from '#domain/rooms/rooms';
import type { UserPrincipal } from '#shared/auth';
import { uniqueId } from '../support/api';
import { get, raw, table } from '../support/raw-table';

/** Rooms and memberships as stored in DynamoDB Local, written by the domain through the real SDK. */

const queryIndex = async (gsi1pk: string) =>
  (
    await raw.send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': gsi1pk },
      }),
    )
  ).Items ?? [];

let projectId: string;
const user = (userId: string, roles: UserPrincipal['roles'] = ['member']): UserPrincipal => ({ kind: 'user', projectId, userId, roles });

beforeAll(async () => {
  projectId = (await createProject({ name: 'rooms', projectId: uniqueId('int').toLowerCase() })).projectId;
});

describe('createRoom', () => {
  it('stores the room under its project and the memberships in the room partition, indexed by user', async () => {
    // Prepare
    const alice = user(uniqueId('alice'));
    const roomId = uniqueId('room');

    // Act
    await createRoom(alice, { id: roomId, type: 'group', name: 'G', members: ['bob'] });

    // Assess
    const room = await get(`P#${projectId}#R#${roomId}`, 'ROOM');
    expect(room).toMatchObject({ projectId, roomId, type: 'group', name: 'G', e2eEnabled: false, createdBy: alice.userId });
    expect(room?.gsi1pk).toBeUndefined();
    expect(Buffer.from(String(room?.e2eKey), 'base64')).toHaveLength(32);
    expect(await get(`P#${projectId}#R#${roomId}`, `M#${alice.userId}`)).toMatchObject({
      role: 'owner',
      gsi1pk: `P#${projectId}#U#${alice.userId}#ROOMS`,
      gsi1sk: `R#${roomId}`,
    });
    expect(await get(`P#${projectId}#R#${roomId}`, 'M#bob')).toMatchObject({ role: 'member', gsi1pk: `P#${projectId}#U#bob#ROOMS` });
    expect((await queryIndex(`P#${projectId}#U#bob#ROOMS`)).map((item) => item.roomId)).toContain(roomId);
  });

  it('indexes public rooms in the project directory only', async () => {
    // Prepare
    const alice = user(uniqueId('alice'));
    const publicId = uniqueId('pub');
    const groupId = uniqueId('grp');

    // Act
    await createRoom(alice, { id: publicId, type: 'public', members: [] });
    await createRoom(alice, { id: groupId, type: 'group', members: [] });

    // Assess
    const directory = (await queryIndex(`P#${projectId}#PUBLIC_ROOMS`)).map((item) => item.roomId);
    expect(directory).toContain(publicId);
    expect(directory).not.toContain(groupId);
    const listed = await listRooms(alice, { scope: 'public', limit: 100 });
    expect(listed.rooms.map((room) => room.id)).toContain(publicId);
  });

  it('gives every room its own random e2e key', async () => {
    // Prepare
    const alice = user(uniqueId('alice'));

    // Act
    const rooms = await Promise.all([1, 2, 3].map(() => createRoom(alice, { type: 'group', members: [] })));

    // Assess
    const keys = await Promise.all(rooms.map(async ({ room }) => (await get(`P#${projectId}#R#${room.id}`, 'ROOM'))?.e2eKey));
    expect(new Set(keys).size).toBe(3);
  });

  it('creates one dm for a pair asked concurrently from both sides', async () => {
    // Prepare
    const alice = user(uniqueId('alice'));
    const bob = user(uniqueId('bob'));

    // Act
    const results = await Promise.all([
      createRoom(alice, { type: 'dm', members: [bob.userId] }),
      createRoom(bob, { type: 'dm', members: [alice.userId] }),
      createRoom(alice, { type: 'dm', members: [bob.userId, alice.userId] }),
    ]);

    // Assess
    expect(new Set(results.map((result) => result.room.id)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    const roomId = results[0]?.room.id as string;
    const members = await raw.send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :m)',
        ExpressionAttributeValues: { ':pk': `P#${projectId}#R#${roomId}`, ':m': 'M#' },
      }),
    );
    expect((members.Items ?? []).map((item) => [item.userId, item.role]).sort()).toEqual(
      [
        [alice.userId, 'member'],
        [bob.userId, 'member'],
      ].sort(),
    );
  });

  it('keeps rooms of the same id in two projects apart', async () => {
    // Prepare
    const other = (await createProject({ name: 'other', projectId: uniqueId('int').toLowerCase() })).projectId;
    const roomId = uniqueId('shared-id');

    // Act
    await createRoom(user('alice'), { id: roomId, type: 'group', name: 'mine', members: [] });
    await createRoom(
      { kind: 'user', projectId: other, userId: 'alice', roles: ['member'] },
      { id: roomId, type: 'public', name: 'theirs', members: [] },
    );

    // Assess
    expect(await get(`P#${projectId}#R#${roomId}`, 'ROOM')).toMatchObject({ name: 'mine', type: 'group' });
    expect(await get(`P#${other}#R#${roomId}`, 'ROOM')).toMatchObject({ name: 'theirs', type: 'public' });
  });
});

describe('memberships', () => {
  it('are written when a member reaches a public room with join, as guests for guest sessions', async () => {
    // Prepare
    const roomId = uniqueId('pub');
    await createRoom(user(uniqueId('owner')), { id: roomId, type: 'public', members: [] });
    const reader = user(uniqueId('reader'));
    const guest = user(uniqueId('guest'), ['guest']);
    const peeker = user(uniqueId('peeker'));

    // Act
    await accessRoom(reader, roomId, { join: true });
    await accessRoom(guest, roomId, { join: true });
    await accessRoom(peeker, roomId, { join: false });

    // Assess
    expect(await get(`P#${projectId}#R#${roomId}`, `M#${reader.userId}`)).toMatchObject({ role: 'member' });
    expect(await get(`P#${projectId}#R#${roomId}`, `M#${guest.userId}`)).toMatchObject({ role: 'guest' });
    expect(await get(`P#${projectId}#R#${roomId}`, `M#${peeker.userId}`)).toBeUndefined();
  });

  it('are added, changed and deleted by addMember and removeMember', async () => {
    // Prepare
    const owner = user(uniqueId('owner'));
    const roomId = uniqueId('room');
    await createRoom(owner, { id: roomId, type: 'group', members: [] });

    // Act
    const added = await addMember(owner, roomId, { userId: 'dave', role: 'guest' });
    const stored = await get(`P#${projectId}#R#${roomId}`, 'M#dave');
    const promoted = await addMember(owner, roomId, { userId: 'dave', role: 'member' });
    await removeMember(owner, roomId, 'dave');

    // Assess
    expect(added).toMatchObject({ created: true, member: { role: 'guest' } });
    expect(stored).toMatchObject({ role: 'guest', gsi1pk: `P#${projectId}#U#dave#ROOMS` });
    expect(promoted).toMatchObject({ created: false, member: { role: 'member', joinedAt: added.member.joinedAt } });
    expect(await get(`P#${projectId}#R#${roomId}`, 'M#dave')).toBeUndefined();
    expect((await queryIndex(`P#${projectId}#U#dave#ROOMS`)).map((item) => item.roomId)).not.toContain(roomId);
  });
});
