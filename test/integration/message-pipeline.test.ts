import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { importMessages } from '#domain/messages/import';
import { createdAtMsOf } from '#domain/messages/message-ids';
import { sendMessage } from '#domain/messages/pipeline';
import { createProject } from '#domain/projects/projects';
import { createRoom } from '#domain/rooms/rooms';
import type { ServicePrincipal, UserPrincipal } from '#shared/auth';
import { dynamo } from '#shared/db/client';
import { uniqueId } from '../support/api';
import { partition, raw, table } from '../support/raw-table';

/**
 * The message pipeline against DynamoDB Local through the real SDK: what it stores, under which
 * keys, and how it behaves under concurrency. Raw reads use a client of their own.
 */

let projectId: string;
let alice: UserPrincipal;
let service: ServicePrincipal;

beforeAll(async () => {
  projectId = (await createProject({ name: 'pipeline', projectId: uniqueId('int').toLowerCase() })).projectId;
  alice = { kind: 'user', projectId, userId: uniqueId('alice'), roles: ['member'] };
  service = { kind: 'service', projectId };
});

async function newRoom() {
  const { room } = await createRoom(alice, { type: 'group', members: [] });
  return room.id;
}

describe('a stored message', () => {
  it('lives in its room message partition, keyed by its zero-padded id, with every field', async () => {
    // Prepare
    const roomId = await newRoom();

    // Act
    const { message } = await sendMessage(
      alice,
      { roomId, content: 'raw check', attachments: ['https://example.com/a.png'], clientMessageId: 'cm-1' },
      { source: 'api', sourceIp: '127.0.0.1' },
    );

    // Assess
    const { Item } = await raw.send(
      new GetCommand({
        TableName: table(),
        Key: { pk: `P#${projectId}#R#${roomId}#MSGS`, sk: `MSG#${String(message.id).padStart(16, '0')}` },
      }),
    );
    expect(Item).toEqual({
      pk: `P#${projectId}#R#${roomId}#MSGS`,
      sk: `MSG#${String(message.id).padStart(16, '0')}`,
      projectId,
      roomId,
      id: message.id,
      userId: alice.userId,
      content: 'raw check',
      parent_id: null,
      attachments: ['https://example.com/a.png'],
      clientMessageId: 'cm-1',
      createdAt: message.createdAt,
      moderation: null,
      // The author index (GDPR export and erasure), written in the same put.
      gsi2pk: `P#${projectId}#U#${alice.userId}#AUTHORED`,
      gsi2sk: `MSG#${String(message.id).padStart(16, '0')}#${roomId}`,
    });
    const guard = await raw.send(new GetCommand({ TableName: table(), Key: { pk: `P#${projectId}#R#${roomId}#MSGS`, sk: 'CMID#cm-1' } }));
    expect(guard.Item).toMatchObject({ messageId: message.id, createdAt: message.createdAt });
  });

  it('has an id derived from its createdAt, so a backdated message sorts into its place', async () => {
    // Prepare
    const roomId = await newRoom();
    const createdAt = '2015-05-05T05:05:05.555Z';

    // Act
    const { message } = await sendMessage(service, { roomId, userId: 'legacy', content: 'old', createdAt }, { source: 'import' });

    // Assess
    expect(createdAtMsOf(message.id)).toBe(Date.parse(createdAt));
    expect(message.createdAt).toBe(createdAt);
  });

  it('writes nothing but the message and, with a clientMessageId, its guard', async () => {
    // Prepare
    const roomId = await newRoom();

    // Act
    await sendMessage(alice, { roomId, content: 'plain' }, { source: 'api' });
    await sendMessage(alice, { roomId, content: 'guarded', clientMessageId: 'g-1' }, { source: 'api' });

    // Assess
    const items = await partition(`P#${projectId}#R#${roomId}#MSGS`);
    expect(items.map((item) => String(item.sk).split('#')[0]).sort()).toEqual(['CMID', 'MSG', 'MSG']);
  });
});

describe('message ids', () => {
  it('increase strictly for sequential sends to a room, even within one millisecond', async () => {
    // Prepare
    const roomId = await newRoom();

    // Act
    const ids: number[] = [];
    for (let index = 0; index < 25; index++) {
      ids.push((await sendMessage(alice, { roomId, content: `n${index}` }, { source: 'api' })).message.id);
    }

    // Assess
    for (let index = 1; index < ids.length; index++) expect(ids[index]).toBeGreaterThan(ids[index - 1] as number);
    const stored = await partition(`P#${projectId}#R#${roomId}#MSGS`);
    expect(stored.map((item) => item.content)).toEqual(ids.map((_, index) => `n${index}`));
  });

  it('never collide: concurrent imports at the same instant all get distinct ids', async () => {
    // Prepare
    const roomId = await newRoom();
    const createdAt = '2018-08-08T08:08:08.008Z';

    // Act
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        sendMessage(service, { roomId, userId: 'u', content: `same-${index}`, createdAt }, { source: 'import' }),
      ),
    );

    // Assess
    expect(new Set(results.map((result) => result.message.id)).size).toBe(20);
    expect(await partition(`P#${projectId}#R#${roomId}#MSGS`)).toHaveLength(20);
  });
});

describe('clientMessageId', () => {
  it('makes concurrent sends of the same id create exactly one message', async () => {
    // Prepare
    const roomId = await newRoom();

    // Act
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        sendMessage(alice, { roomId, content: `attempt ${index}`, clientMessageId: 'once-only' }, { source: 'api' }),
      ),
    );

    // Assess
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.message.id)).size).toBe(1);
    const items = await partition(`P#${projectId}#R#${roomId}#MSGS`);
    expect(items.filter((item) => String(item.sk).startsWith('MSG#'))).toHaveLength(1);
  });

  it('creates one message when a retry arrives while the first attempt is still writing (slow first write)', async () => {
    // Prepare: the first attempt's message write takes 400 ms (a slow DynamoDB call or a paused instance)
    const roomId = await newRoom();
    const delay = 'slowFirstMessageWrite';
    dynamo.middlewareStack.add(
      (next) => async (args: any) => {
        // The message travels with its guard in one transaction.
        const items = [args.input?.Item, ...(args.input?.TransactItems ?? []).map((part: any) => part.Put?.Item)];
        if (items.some((item) => item?.sk?.S?.startsWith('MSG#') && item?.content?.S === 'first attempt'))
          await new Promise((r) => setTimeout(r, 400));
        return next(args);
      },
      { step: 'build', name: delay },
    );

    // Act
    let results: Awaited<ReturnType<typeof sendMessage>>[];
    try {
      const first = sendMessage(alice, { roomId, content: 'first attempt', clientMessageId: 'slow' }, { source: 'api' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const retry = sendMessage(alice, { roomId, content: 'retry', clientMessageId: 'slow' }, { source: 'api' });
      results = await Promise.all([first, retry]);
    } finally {
      dynamo.middlewareStack.remove(delay);
    }

    // Assess
    const messages = (await partition(`P#${projectId}#R#${roomId}#MSGS`)).filter((item) => String(item.sk).startsWith('MSG#'));
    expect(messages.map((item) => item.content)).toHaveLength(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(results[0]?.message.id).toBe(results[1]?.message.id);
  });

  it('finishes an attempt that died after reserving its id: the retry writes the message under the reserved id and time', async () => {
    // Prepare
    const roomId = await newRoom();
    const reservedId = Date.parse('2024-04-04T04:04:04.004Z') * 1000 + 7;
    await raw.send(
      new PutCommand({
        TableName: table(),
        Item: { pk: `P#${projectId}#R#${roomId}#MSGS`, sk: 'CMID#crashed', messageId: reservedId, createdAt: '2024-04-04T04:04:04.004Z' },
      }),
    );

    // Act
    const retry = await sendMessage(alice, { roomId, content: 'after the crash', clientMessageId: 'crashed' }, { source: 'api' });
    const again = await sendMessage(alice, { roomId, content: 'after the crash', clientMessageId: 'crashed' }, { source: 'api' });

    // Assess
    expect(retry.created).toBe(true);
    expect(retry.message).toMatchObject({ id: reservedId, createdAt: '2024-04-04T04:04:04.004Z', content: 'after the crash' });
    expect(again).toEqual({ created: false, message: retry.message });
  });
});

describe('batch imports', () => {
  it('write nothing when one row names an unknown room', async () => {
    // Prepare
    const roomId = await newRoom();

    // Act
    const attempt = importMessages(service, [
      { roomId, userId: 'u', content: 'one' },
      { roomId: uniqueId('missing'), userId: 'u', content: 'two' },
    ]);

    // Assess
    await expect(attempt).rejects.toMatchObject({ statusCode: 404, code: 'room_not_found' });
    expect(await partition(`P#${projectId}#R#${roomId}#MSGS`)).toEqual([]);
  });
});

describe('the message rate limit', () => {
  it('counts a user send in a one-minute window item that expires by TTL', async () => {
    // Prepare
    const roomId = await newRoom();
    const sender: UserPrincipal = { ...alice, userId: uniqueId('counted') };
    await createRoom(sender, { id: `own-${roomId}`, type: 'group', members: [] });
    const window = Math.floor(Date.now() / 60_000);

    // Act
    await sendMessage(sender, { roomId: `own-${roomId}`, content: 'counted' }, { source: 'api' });

    // Assess
    const items = await partition(`P#${projectId}#RL#messages#user:${sender.userId}`);
    expect(items).toHaveLength(1);
    const [item] = items;
    expect(item?.count).toBe(1);
    expect([`W#${window}`, `W#${window + 1}`]).toContain(item?.sk);
    const windowIndex = Number(String(item?.sk).slice(2));
    expect(item?.ttl).toBe(Math.ceil(((windowIndex + 1) * 60_000) / 1000) + 60);
    expect(item?.ttl).toBeGreaterThan(Date.now() / 1000);
  });

  it('is not consumed by imports', async () => {
    // Prepare
    const roomId = await newRoom();
    const admin: UserPrincipal = { kind: 'user', projectId, userId: uniqueId('importer'), roles: ['admin'] };

    // Act
    await sendMessage(admin, { roomId, userId: 'legacy', content: 'imported' }, { source: 'import' });

    // Assess
    expect(await partition(`P#${projectId}#RL#messages#user:${admin.userId}`)).toEqual([]);
  });
});
