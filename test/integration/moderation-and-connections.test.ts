import { randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { sendMessage } from '#domain/messages/pipeline';
import { getBlockList, listAutoFlags, replaceBlockList } from '#domain/moderation/block-list';
import { createProject } from '#domain/projects/projects';
import { broadcastToRoom } from '#domain/realtime/broadcast';
import { dropConnection, registerConnection, roomConnections, userConnections } from '#domain/realtime/connections';
import { createRoom } from '#domain/rooms/rooms';
import type { UserPrincipal } from '#shared/auth';
import { CONNECTION_TTL_SECONDS, roomListShardKey } from '#shared/db/connection';
import { uniqueId } from '../support/api';
import { get, partition, raw, roomListEntry, table } from '../support/raw-table';

/** Block lists, moderation records and WebSocket connection items in DynamoDB Local. */

/** A fresh project each: block lists are cached per project. */
async function freshProject() {
  const projectId = (await createProject({ name: 'moderation', projectId: uniqueId('int').toLowerCase() })).projectId;
  const author: UserPrincipal = { kind: 'user', projectId, userId: uniqueId('author'), roles: ['member'] };
  const { room } = await createRoom(author, { type: 'group', members: [] });
  return { projectId, author, roomId: room.id };
}

describe('the block list', () => {
  it('is one item per project with normalized terms and who changed it', async () => {
    // Prepare
    const { projectId } = await freshProject();

    // Act
    await replaceBlockList(projectId, ['  Foo ', 'foo', 'BAR baz'], 'admin-1');

    // Assess
    expect(await get(`P#${projectId}`, 'BLOCKLIST')).toMatchObject({ terms: ['foo', 'bar baz'], updatedBy: 'admin-1' });
    expect((await getBlockList(projectId)).terms).toEqual(['foo', 'bar baz']);
  });
});

describe('an automatic flag', () => {
  it('on a backdated import lists before older flags: flags are ordered by when they were raised', async () => {
    // Prepare
    const { projectId, author, roomId } = await freshProject();
    await replaceBlockList(projectId, ['forbidden'], 'admin');
    const live = await sendMessage(author, { roomId, content: 'forbidden now' }, { source: 'api' });

    // Act
    const service = { kind: 'service' as const, projectId };
    const imported = await sendMessage(
      service,
      { roomId, userId: author.userId, content: 'forbidden long ago', createdAt: '2020-01-01T00:00:00.000Z' },
      { source: 'import' },
    );

    // Assess
    const flags = await listAutoFlags(projectId, 10);
    expect(flags.map((flag) => flag.messageId)).toEqual([imported.message.id, live.message.id]);
  });

  it('stores the labelled message, a moderation record and an automation event under the same sort key', async () => {
    // Prepare
    const { projectId, author, roomId } = await freshProject();
    await replaceBlockList(projectId, ['forbidden'], 'admin');

    // Act
    const { message } = await sendMessage(author, { roomId, content: 'this is FORBIDDEN text' }, { source: 'api' });

    // Assess
    expect(message.moderation).toEqual({ label: 'auto_flag', reason: 'block_list:forbidden' });
    const [record] = await partition(`P#${projectId}#MODERATION`);
    const flaggedAt = String(record?.createdAt);
    expect(Date.parse(flaggedAt)).toBeGreaterThanOrEqual(Date.parse(message.createdAt));
    const sk = `${flaggedAt}#${roomId}#${message.id}`;
    expect(await partition(`P#${projectId}#MODERATION`)).toEqual([
      {
        pk: `P#${projectId}#MODERATION`,
        sk,
        projectId,
        roomId,
        messageId: message.id,
        userId: author.userId,
        label: 'auto_flag',
        reason: 'block_list:forbidden',
        matchedTerm: 'forbidden',
        createdAt: flaggedAt,
      },
    ]);
    expect(await partition(`P#${projectId}#AUTOMATION`)).toEqual([
      expect.objectContaining({ sk, rule: 'block_list', action: 'label_message', label: 'auto_flag', messageId: message.id }),
    ]);
    expect(await listAutoFlags(projectId, 10)).toEqual([expect.objectContaining({ messageId: message.id, matchedTerm: 'forbidden' })]);
  });

  it('is not written for a clean message', async () => {
    // Prepare
    const { projectId, author, roomId } = await freshProject();
    await replaceBlockList(projectId, ['forbidden'], 'admin');

    // Act
    const { message } = await sendMessage(author, { roomId, content: 'all good' }, { source: 'api' });

    // Assess
    expect(message.moderation).toBeNull();
    expect(await partition(`P#${projectId}#MODERATION`)).toEqual([]);
    expect(await partition(`P#${projectId}#AUTOMATION`)).toEqual([]);
  });
});

describe('WebSocket connections', () => {
  it('are stored under the connection id, the room and the user, each with a TTL', async () => {
    // Prepare
    const { projectId, roomId } = await freshProject();
    const connectionId = uniqueId('conn');
    const before = Math.floor(Date.now() / 1000);

    // Act
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: ['member'], connectionId });

    // Assess
    const byId = await get(`CONN#${connectionId}`, 'CONN');
    expect(byId).toMatchObject({ projectId, channel: 'room', roomId, userId: 'alice', connectionId, roles: ['member'] });
    const byRoom = await roomListEntry(projectId, roomId, connectionId);
    const byUser = await get(`P#${projectId}#U#alice#CONNS`, `C#${connectionId}`);
    expect(byRoom).toMatchObject({ connectionId, userId: 'alice', ttl: byId?.ttl, shardTtl: byId?.ttl });
    expect(byUser).toMatchObject({ connectionId, userId: 'alice', channel: 'room', roomId });
    for (const item of [byId, byRoom, byUser]) {
      expect(item?.ttl).toBeGreaterThan(before + 2 * 3600);
      expect(item?.ttl).toBeLessThanOrEqual(before + 3 * 3600);
    }
    expect((await roomConnections(projectId, roomId)).map((c) => c.connectionId)).toEqual([connectionId]);
    expect((await userConnections(projectId, 'alice')).map((c) => c.connectionId)).toEqual([connectionId]);
  });

  it('count presence atomically: first in joins and occupies, last out leaves and vacates, once each', async () => {
    // Prepare
    const { projectId, roomId } = await freshProject();
    const ids = Array.from({ length: 6 }, () => uniqueId('conn'));

    // Act: six connections of one user at once, then all dropped at once, each dropped twice
    const arrivals = await Promise.all(
      ids.map((connectionId) => registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: [], connectionId })),
    );
    const departures = await Promise.all([...ids, ...ids].map((connectionId) => dropConnection(connectionId)));

    // Assess
    expect(arrivals.filter((change) => change.joined)).toHaveLength(1);
    expect(arrivals.filter((change) => change.occupied)).toHaveLength(1);
    expect(arrivals.filter((change) => change.online)).toHaveLength(1);
    const dropped = departures.filter((drop) => drop !== undefined);
    expect(dropped).toHaveLength(6);
    expect(dropped.filter((drop) => drop?.change.left)).toHaveLength(1);
    expect(dropped.filter((drop) => drop?.change.vacated)).toHaveLength(1);
    expect(dropped.filter((drop) => drop?.change.offline)).toHaveLength(1);
    expect(await roomConnections(projectId, roomId)).toEqual([]);
  });

  it('past their TTL are skipped by the fan-out even before DynamoDB removes them, and taken off the room list', async () => {
    // Prepare: a live connection, and an expired entry in its shard and in a shard of its own
    const { projectId, roomId } = await freshProject();
    const live = uniqueId('live');
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: ['member'], connectionId: live });
    const shared = (await roomListEntry(projectId, roomId, live))?.shard ?? '';
    const lonely = shared === 'C#~00' ? 'C#~01' : 'C#~00';
    const past = Math.floor(Date.now() / 1000) - 10;
    for (const sk of [shared, lonely]) {
      await raw.send(
        new UpdateCommand({
          TableName: table(),
          Key: { pk: `P#${projectId}#R#${roomId}#CONNS`, sk },
          UpdateExpression: 'ADD c :entry',
          ExpressionAttributeValues: { ':entry': new Set([`expired-${sk} ghost ${past}`]) },
        }),
      );
    }

    // Act
    const listed = await roomConnections(projectId, roomId);

    // Assess
    expect(listed.map((ref) => ref.connectionId)).toEqual([live]);
    expect(await roomListEntry(projectId, roomId, live)).toBeDefined();
    for (const sk of [shared, lonely]) expect(await roomListEntry(projectId, roomId, `expired-${sk}`)).toBeUndefined();
  });

  it('leave no empty shard behind when the shard that listed them is already gone', async () => {
    // Prepare: TTL swept the shard before the disconnect came
    const { projectId, roomId } = await freshProject();
    const connectionId = uniqueId('conn');
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: ['member'], connectionId });
    const shard = (await roomListEntry(projectId, roomId, connectionId))?.shard ?? '';
    await raw.send(new DeleteCommand({ TableName: table(), Key: { pk: `P#${projectId}#R#${roomId}#CONNS`, sk: shard } }));

    // Act
    const dropped = await dropConnection(connectionId);

    // Assess
    expect(dropped?.change.left).toBe(true);
    expect(await get(`P#${projectId}#R#${roomId}#CONNS`, shard)).toBeUndefined();
  });

  it('opened before the packed list (an item per connection) stay listed, and their disconnect deletes that item', async () => {
    // Prepare: what an earlier release stored for a room connection, beside a connection of today
    const { projectId, roomId } = await freshProject();
    const earlier = uniqueId('earlier');
    const today = uniqueId('today');
    const ttl = Math.floor(Date.now() / 1000) + 3600;
    await raw.send(
      new PutCommand({
        TableName: table(),
        Item: {
          pk: `CONN#${earlier}`,
          sk: 'CONN',
          projectId,
          channel: 'room',
          roomId,
          userId: 'bob',
          roles: [],
          connectionId: earlier,
          connectedAt: new Date(Date.now() - 60_000).toISOString(),
          ttl,
        },
      }),
    );
    await raw.send(
      new PutCommand({
        TableName: table(),
        Item: {
          pk: `P#${projectId}#R#${roomId}#CONNS`,
          sk: `C#${earlier}`,
          connectionId: earlier,
          userId: 'bob',
          channel: 'room',
          roomId,
          ttl,
        },
      }),
    );
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: [], connectionId: today });

    // Act
    const before = await roomConnections(projectId, roomId);
    await dropConnection(earlier);
    const after = await roomConnections(projectId, roomId);

    // Assess
    expect(before.map((ref) => [ref.connectionId, ref.userId]).sort()).toEqual(
      [
        [earlier, 'bob'],
        [today, 'alice'],
      ].sort(),
    );
    expect(await get(`P#${projectId}#R#${roomId}#CONNS`, `C#${earlier}`)).toBeUndefined();
    expect(after.map((ref) => ref.connectionId)).toEqual([today]);
  });

  it('whose room list write fails are not left half-stored: lookup, user item and counters are undone', async () => {
    // Prepare: the connection's shard holds something that is not a string set, so the ADD fails
    const { projectId, roomId } = await freshProject();
    const connectionId = uniqueId('broken');
    await raw.send(new PutCommand({ TableName: table(), Item: { ...roomListShardKey(projectId, roomId, connectionId), c: 'not a set' } }));

    // Act
    const registering = registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: [], connectionId });

    // Assess
    await expect(registering).rejects.toThrow();
    expect(await get(`CONN#${connectionId}`, 'CONN')).toBeUndefined();
    expect(await get(`P#${projectId}#U#alice#CONNS`, `C#${connectionId}`)).toBeUndefined();
    expect(await get(`P#${projectId}#R#${roomId}#CONNS`, `N#U#alice`)).toMatchObject({ connections: 0 });
    expect(await get(`P#${projectId}#R#${roomId}#CONNS`, 'N#ROOM')).toMatchObject({ connections: 0 });
  });

  it('skip a malformed entry of the room list and still list the others', async () => {
    // Prepare
    const { projectId, roomId } = await freshProject();
    const live = uniqueId('live');
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: [], connectionId: live });
    const { sk } = roomListShardKey(projectId, roomId, live);
    await raw.send(
      new UpdateCommand({
        TableName: table(),
        Key: { pk: `P#${projectId}#R#${roomId}#CONNS`, sk },
        UpdateExpression: 'ADD c :bad',
        ExpressionAttributeValues: { ':bad': new Set(['no-user-and-no-ttl']) },
      }),
    );

    // Act
    const listed = await roomConnections(projectId, roomId);

    // Assess
    expect(listed.map((ref) => ref.connectionId)).toEqual([live]);
  });

  it('of a room spread over the list shards and are all read back by one Query', async () => {
    // Prepare
    const { projectId, roomId } = await freshProject();
    const ids = Array.from({ length: 200 }, (_, i) => `spread-${i}-${uniqueId('c')}`);
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids
          .slice(i, i + 25)
          .map((connectionId, j) =>
            registerConnection({ projectId, channel: 'room', roomId, userId: `user-${i + j}`, roles: [], connectionId }),
          ),
      );
    }

    // Act
    const listed = await roomConnections(projectId, roomId);

    // Assess
    expect(listed.map((ref) => ref.connectionId).sort()).toEqual([...ids].sort());
    expect(
      listed.every((ref) => ref.userId === `user-${ids.indexOf(ref.connectionId)}` && ref.channel === 'room' && ref.roomId === roomId),
    ).toBe(true);
    const shards = (await partition(`P#${projectId}#R#${roomId}#CONNS`)).filter((item) => String(item.sk).startsWith('C#~'));
    expect(shards.length).toBeGreaterThan(16);
    expect(shards.length).toBeLessThanOrEqual(32);
  });

  it('are deleted in all three places', async () => {
    // Prepare
    const { projectId, roomId } = await freshProject();
    const connectionId = uniqueId('conn');
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: ['member'], connectionId });

    // Act
    await dropConnection(connectionId);

    // Assess
    expect(await roomListEntry(projectId, roomId, connectionId)).toBeUndefined();
    expect(await get(`P#${projectId}#U#alice#CONNS`, `C#${connectionId}`)).toBeUndefined();
    expect(await get(`CONN#${connectionId}`, 'CONN')).toBeUndefined();
  });

  it('that the gateway no longer knows are deleted when a message is broadcast to them', async () => {
    // Prepare: a connection past its handshake that API Gateway has forgotten
    const { projectId, author, roomId } = await freshProject();
    const stale = uniqueId('stale');
    await registerConnection({ projectId, channel: 'room', roomId, userId: author.userId, roles: ['member'], connectionId: stale });
    await age(stale);

    // Act
    await sendMessage(author, { roomId, content: 'to nobody' }, { source: 'api' });

    // Assess
    expect(await roomListEntry(projectId, roomId, stale)).toBeUndefined();
    expect(await get(`CONN#${stale}`, 'CONN')).toBeUndefined();
    expect(await get(`P#${projectId}#R#${roomId}#CONNS`, `N#U#${author.userId}`)).toMatchObject({ connections: 0 });
  });

  it('that answer 410 while still inside their handshake are kept (API Gateway answers 410 until the upgrade completes)', async () => {
    // Prepare: just registered, as during $connect
    const { projectId, author, roomId } = await freshProject();
    const opening = uniqueId('opening');
    await registerConnection({ projectId, channel: 'room', roomId, userId: author.userId, roles: ['member'], connectionId: opening });

    // Act
    await sendMessage(author, { roomId, content: 'before the upgrade completed' }, { source: 'api' });

    // Assess
    expect(await get(`CONN#${opening}`, 'CONN')).toMatchObject({ connectionId: opening });
    expect(await roomListEntry(projectId, roomId, opening)).toBeDefined();
  });

  it('that are listed but have no lookup are taken off the list by the fan-out that finds them gone, unless still in their handshake grace', async () => {
    // Prepare: entries a failed disconnect or connect leaves behind (no lookup item), and a live one
    const { projectId, roomId } = await freshProject();
    const now = Math.floor(Date.now() / 1000);
    const orphan = { connectionId: randomBytes(10).toString('base64'), userId: 'gone-user', ttl: now + CONNECTION_TTL_SECONDS - 60 };
    const connecting = { connectionId: randomBytes(10).toString('base64'), userId: 'new-user', ttl: now + CONNECTION_TTL_SECONDS };
    for (const entry of [orphan, connecting]) {
      await raw.send(
        new UpdateCommand({
          TableName: table(),
          Key: roomListShardKey(projectId, roomId, entry.connectionId),
          UpdateExpression: 'ADD c :entry SET #ttl = :ttl',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':entry': new Set([`${entry.connectionId} ${entry.userId} ${entry.ttl}`]), ':ttl': entry.ttl },
        }),
      );
    }
    const live = uniqueId('live');
    await registerConnection({ projectId, channel: 'room', roomId, userId: 'alice', roles: [], connectionId: live });

    // Act: the gateway answers 410 for both unknown connections
    const result = await broadcastToRoom(projectId, roomId, { type: 'event', roomId, event: 'client-test', data: {} });

    // Assess
    expect(result).toEqual({ sent: 0, queued: 0 });
    expect(await roomListEntry(projectId, roomId, orphan.connectionId)).toBeUndefined();
    expect(await roomListEntry(projectId, roomId, connecting.connectionId)).toBeDefined();
    expect(await roomListEntry(projectId, roomId, live)).toBeDefined();
  });
});

/** Moves a connection's connect time past the handshake grace. */
async function age(connectionId: string): Promise<void> {
  await raw.send(
    new UpdateCommand({
      TableName: table(),
      Key: { pk: `CONN#${connectionId}`, sk: 'CONN' },
      UpdateExpression: 'SET connectedAt = :old',
      ExpressionAttributeValues: { ':old': new Date(Date.now() - 60_000).toISOString() },
    }),
  );
}
