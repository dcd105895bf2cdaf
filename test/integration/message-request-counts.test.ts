import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { userConnections } from '#domain/realtime/connections';
import { dynamo } from '#shared/db/client';
import { handler as createMessage } from '../../functions/http/messages/create-message';
import { handler as importMessage } from '../../functions/http/messages/import-message';
import { handler as importMessageBatch } from '../../functions/http/messages/import-message-batch';
import { handler as webSocketFrame } from '../../functions/ws/default';
import { lambdaContext } from '../../lib/local/handlers';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';
import { dynamoRequestsOf } from '../support/dynamo-requests';
import { invokeRoute } from '../support/in-process-route';
import { partition } from '../support/raw-table';
import { connect, type RoomSocket } from '../support/ws';

/**
 * What each message variant costs in DynamoDB requests, counted on the SDK client the domain code
 * shares, with the real route and frame handlers called in this process as the gateway calls them
 * (warm caches, as a steady-state message finds them). The goal is 3 for every variant: the
 * `clientMessageId` guard and a reply's parent check travel in the message's own transaction. A
 * reply to a reply costs one write more (the guess "the parent is a thread root" fails and returns
 * the parent). Then the behaviour those transactions must keep: idempotency and thread placement.
 */

let project: TestProject;
let alice: string;
let aliceId: string;
let roomId: string;
let socket: RoomSocket;
let connectionId: string;

beforeAll(async () => {
  project = await createTestProject('request-counts');
  aliceId = uniqueId('alice');
  alice = await project.token(aliceId);
  roomId = uniqueId('room');
  expect((await api('/rooms', { token: alice, body: { id: roomId, type: 'group', members: [] } })).status).toBe(201);
  socket = await connect(roomId, alice);
  await socket.socketId();
  const [ref] = await userConnections(project.projectId, aliceId);
  connectionId = ref?.connectionId as string;
  expect(connectionId).toBeTruthy();
});

afterAll(async () => {
  await socket?.close();
});

/**
 * The commands the domain's DynamoDB client sends while `send(body)` runs, right after a plain
 * `send` that refreshes any per-instance cache (room access, block list: `CACHE_TTL_MS`) expired
 * meanwhile: a refresh is a cost per instance and interval, which the bench shows, not per message.
 */
async function commandsOf<T>(send: (body: Record<string, unknown>) => Promise<T>, body: Record<string, unknown>) {
  await send({ content: 'warm' });
  return (await dynamoRequestsOf(() => send(body))).map((request) => request.command);
}

const post = (body: Record<string, unknown>) =>
  invokeRoute(createMessage, 'CreateMessage', { headers: { authorization: `Bearer ${alice}` }, body: { roomId, ...body } });

const importOne = (body: Record<string, unknown>) =>
  invokeRoute(importMessage, 'ImportMessage', {
    headers: { 'x-service-api-key': project.apiKey },
    body: { roomId, userId: 'dave', ...body },
  });

const importBatch = (rows: Record<string, unknown>[]) =>
  invokeRoute(importMessageBatch, 'ImportMessageBatch', {
    headers: { 'x-service-api-key': project.apiKey },
    body: { messages: rows.map((row) => ({ roomId, userId: 'dave', ...row })) },
  });

/** A `message` frame on alice's socket, through the `$default` handler as API Gateway invokes it; answers its ack. */
async function frame(body: Record<string, unknown>) {
  const ack = socket.next((answer) => answer.type === 'ack' || answer.type === 'error');
  const event = {
    requestContext: {
      routeKey: '$default',
      eventType: 'MESSAGE',
      connectionId,
      domainName: '127.0.0.1',
      stage: 'local',
      apiId: 'local',
      requestId: uniqueId('frame'),
      connectedAt: Date.now(),
      requestTimeEpoch: Date.now(),
      messageDirection: 'IN',
      identity: { sourceIp: '127.0.0.1' },
    },
    isBase64Encoded: false,
    body: JSON.stringify({ type: 'message', ...body }),
  };
  await (webSocketFrame as unknown as (event: unknown, context: unknown) => Promise<unknown>)(event, lambdaContext('WsDefault'));
  return ack;
}

const PLAIN = ['UpdateItem', 'PutItem', 'Query'];
const TRANSACTED = ['UpdateItem', 'TransactWriteItems', 'Query'];

describe('a message over POST /messages', () => {
  it('costs 3 requests in every variant: plain, with clientMessageId, a reply to a root, and both', async () => {
    // Prepare: warm the caches (project, room + membership, block list) and find a root
    const root = (await post({ content: 'root' })).body.id as number;

    // Act
    const plain = await commandsOf(post, { content: 'plain' });
    const guarded = await commandsOf(post, { content: 'guarded', clientMessageId: uniqueId('cm') });
    const reply = await commandsOf(post, { content: 'reply', parent_id: root });
    const guardedReply = await commandsOf(post, { content: 'guarded reply', parent_id: root, clientMessageId: uniqueId('cm') });

    // Assess
    expect(plain).toEqual(PLAIN);
    expect(guarded).toEqual(TRANSACTED);
    expect(reply).toEqual(TRANSACTED);
    expect(guardedReply).toEqual(TRANSACTED);
  });

  it('costs 3 for a repeated clientMessageId (the refused transaction returns the guard; one read of the message) and broadcasts nothing', async () => {
    // Prepare
    const clientMessageId = uniqueId('cm');
    expect((await post({ content: 'once', clientMessageId })).status).toBe(201);

    // Act
    const repeat = await commandsOf(post, { content: 'once', clientMessageId });

    // Assess
    expect(repeat).toEqual(['UpdateItem', 'TransactWriteItems', 'GetItem']);
  });

  it('costs 4 for a reply to a reply: the guessed placement is refused with the parent, and the next write takes its placement', async () => {
    // Prepare
    const root = (await post({ content: 'root' })).body.id as number;
    const child = (await post({ content: 'child', parent_id: root })).body.id as number;

    // Act
    const reply = await commandsOf(post, { content: 'grandchild', parent_id: child });
    const guardedReply = await commandsOf(post, { content: 'guarded grandchild', parent_id: child, clientMessageId: uniqueId('cm') });

    // Assess
    expect(reply).toEqual(['UpdateItem', 'TransactWriteItems', 'PutItem', 'Query']);
    expect(guardedReply).toEqual(['UpdateItem', 'TransactWriteItems', 'TransactWriteItems', 'Query']);
  });
});

describe('a message frame on a WebSocket', () => {
  it('costs 3 requests in every variant, as over HTTP (the connection comes from the per-instance cache)', async () => {
    // Prepare: warm the connection cache and the room caches
    const root = (await frame({ content: 'root' })).message.id as number;

    // Act
    const plain = await commandsOf(frame, { content: 'plain' });
    const guarded = await commandsOf(frame, { content: 'guarded', clientMessageId: uniqueId('cm') });
    const reply = await commandsOf(frame, { content: 'reply', parent_id: root });
    const guardedReply = await commandsOf(frame, { content: 'guarded reply', parent_id: root, clientMessageId: uniqueId('cm') });

    // Assess
    expect(plain).toEqual(PLAIN);
    expect(guarded).toEqual(TRANSACTED);
    expect(reply).toEqual(TRANSACTED);
    expect(guardedReply).toEqual(TRANSACTED);
  });
});

describe('an import row', () => {
  it('costs 2 requests in every variant (imports take no rate limit): the write and the connection list; the request adds its audit record', async () => {
    // Prepare
    const root = (await importOne({ content: 'root' })).body.id as number;
    await importBatch([{ content: 'warm' }]);
    /** The requests of the rows, and apart from them those writing the import's audit record (one per request). */
    const split = async (work: () => Promise<unknown>) => {
      await importOne({ content: 'warm' });
      const sent = await dynamoRequestsOf(work);
      const audit = (request: { pk?: string }) => request.pk === `P#${project.projectId}#AUDIT`;
      return { rows: sent.filter((request) => !audit(request)).map((request) => request.command), audit: sent.filter(audit).length };
    };

    // Act
    const plain = await split(() => importOne({ content: 'plain' }));
    const guardedReply = await split(() => importOne({ content: 'guarded reply', parent_id: root, clientMessageId: uniqueId('cm') }));
    const rows = [
      { content: 'plain row' },
      { content: 'guarded row', clientMessageId: uniqueId('cm') },
      { content: 'reply row', parent_id: root },
      { content: 'guarded reply row', parent_id: root, clientMessageId: uniqueId('cm') },
    ];
    const batch = await split(() => importBatch(rows));

    // Assess
    expect(plain).toEqual({ rows: ['PutItem', 'Query'], audit: 1 });
    expect(guardedReply).toEqual({ rows: ['TransactWriteItems', 'Query'], audit: 1 });
    expect(batch.rows.filter((command) => command !== 'Query')).toEqual([
      'PutItem',
      'TransactWriteItems',
      'TransactWriteItems',
      'TransactWriteItems',
    ]);
    expect(batch.rows).toHaveLength(rows.length * 2);
    expect(batch.audit).toBe(1);
  });
});

const storedIn = async (room: string) => {
  const items = await partition(`P#${project.projectId}#R#${room}#MSGS`);
  return {
    messages: items.filter((item) => String(item.sk).startsWith('MSG#')),
    guards: items.filter((item) => String(item.sk).startsWith('CMID#')),
  };
};

async function newRoom() {
  const id = uniqueId('room');
  expect((await api('/rooms', { token: alice, body: { id, type: 'group', members: [] } })).status).toBe(201);
  return id;
}

const send = (room: string, body: Record<string, unknown>) => api('/messages', { token: alice, body: { roomId: room, ...body } });

describe('clientMessageId in one transaction with the message', () => {
  it('answers a repeat with the original message, and stores one message and one guard', async () => {
    // Prepare
    const room = await newRoom();

    // Act
    const first = await send(room, { content: 'hello', clientMessageId: 'dup-1' });
    const again = await send(room, { content: 'hello again', clientMessageId: 'dup-1' });

    // Assess
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body).toEqual(first.body);
    const { messages, guards } = await storedIn(room);
    expect(messages).toHaveLength(1);
    expect(guards).toEqual([expect.objectContaining({ messageId: first.body.id, createdAt: first.body.createdAt })]);
  });

  it('stores one message for concurrent replies with the same clientMessageId, placed under the right thread', async () => {
    // Prepare
    const room = await newRoom();
    const root = (await send(room, { content: 'root' })).body.id as number;
    const child = (await send(room, { content: 'child', parent_id: root })).body.id as number;

    // Act
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) => send(room, { content: `attempt ${index}`, parent_id: child, clientMessageId: 'race' })),
    );

    // Assess
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    const { messages, guards } = await storedIn(room);
    expect(messages).toHaveLength(3);
    expect(guards).toHaveLength(1);
    const stored = messages.find((item) => item.id === answers[0]?.body.id);
    expect(stored).toMatchObject({ parent_id: child, thread_root: root, thread_depth: 2 });
  });

  it('stores every one of many concurrent replies to one thread root, each under that root, however their checks of the root collide', async () => {
    // Prepare
    const room = await newRoom();
    const root = (await send(room, { content: 'root' })).body.id as number;

    // Act
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        send(room, { content: `reply ${index}`, parent_id: root, ...(index % 2 ? { clientMessageId: `crowd-${index}` } : {}) }),
      ),
    );

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(201));
    const { messages } = await storedIn(room);
    expect(messages).toHaveLength(25);
    for (const reply of messages.filter((item) => item.id !== root)) {
      expect(reply).toMatchObject({ parent_id: root, thread_root: root, thread_depth: 1 });
    }
  });

  it('reads the parent and writes again when the check of a busy root is cancelled by another transaction on it', async () => {
    // Prepare: the first transaction that checks a parent is cancelled as DynamoDB cancels one that
    // meets another on an item (DynamoDB Local serializes transactions, so it never does by itself)
    const root = (await post({ content: 'busy root' })).body.id as number;
    const conflict = 'conflictOnParentCheck';
    let cancelled = 0;
    dynamo.middlewareStack.add(
      (next) => async (args: any) => {
        const parts = args.input?.TransactItems ?? [];
        if (cancelled === 0 && parts.some((part: any) => part.ConditionCheck)) {
          cancelled++;
          throw Object.assign(new Error('Transaction cancelled'), {
            name: 'TransactionCanceledException',
            CancellationReasons: parts.map((part: any) => ({ Code: part.ConditionCheck ? 'TransactionConflict' : 'None' })),
          });
        }
        return next(args);
      },
      { step: 'build', name: conflict },
    );

    // Act
    let reply: Awaited<ReturnType<typeof post>>;
    try {
      reply = await post({ content: 'crowded reply', parent_id: root, clientMessageId: uniqueId('crowd') });
    } finally {
      dynamo.middlewareStack.remove(conflict);
    }

    // Assess
    expect(cancelled).toBe(1);
    expect(reply.status).toBe(201);
    const { messages } = await storedIn(roomId);
    expect(messages.find((item) => item.id === reply.body.id)).toMatchObject({ parent_id: root, thread_root: root, thread_depth: 1 });
  });

  it('moves to the next id when the id is taken, and a retry still finds the message under the id it took', async () => {
    // Prepare: the random sub-millisecond slot pinned (in this process, whose handler is called), so
    // two imports at one instant want the same id
    const room = await newRoom();
    const createdAt = '2025-05-05T05:05:05.005Z';
    const importAt = (body: Record<string, unknown>) =>
      invokeRoute(importMessage, 'ImportMessage', {
        headers: { 'x-service-api-key': project.apiKey },
        body: { roomId: room, userId: 'dave', createdAt, ...body },
      });
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const occupant = await importAt({ content: 'occupant' });

      // Act
      const guarded = await importAt({ content: 'guarded', clientMessageId: 'next-slot' });
      const retry = await importAt({ content: 'guarded', clientMessageId: 'next-slot' });

      // Assess
      expect(occupant.body.id).toBe(Date.parse(createdAt) * 1000);
      expect([guarded.status, guarded.body.id]).toEqual([201, occupant.body.id + 1]);
      expect([retry.status, retry.body]).toEqual([200, guarded.body]);
      const { guards } = await storedIn(room);
      expect(guards).toEqual([expect.objectContaining({ messageId: guarded.body.id })]);
    } finally {
      random.mockRestore();
    }
  });
});

describe('a reply placed by the write that stores it', () => {
  it('answers 404 message_not_found for a missing parent and stores nothing, not even the guard', async () => {
    // Prepare
    const room = await newRoom();

    // Act
    const plain = await send(room, { content: 'orphan', parent_id: 1_700_000_000_000_000 });
    const guarded = await send(room, { content: 'orphan', parent_id: 1_700_000_000_000_000, clientMessageId: 'orphan-1' });

    // Assess
    expect([plain.status, plain.body.error?.code]).toEqual([404, 'message_not_found']);
    expect([guarded.status, guarded.body.error?.code]).toEqual([404, 'message_not_found']);
    expect(await storedIn(room)).toEqual({ messages: [], guards: [] });
  });

  it('files a reply to a reply under the thread root with its depth and path, as the parent read did', async () => {
    // Prepare
    const room = await newRoom();
    const root = (await send(room, { content: 'root' })).body.id as number;
    const child = (await send(room, { content: 'child', parent_id: root })).body.id as number;

    // Act
    const grandchild = await send(room, { content: 'grandchild', parent_id: child });
    const greatGrandchild = await send(room, { content: 'great-grandchild', parent_id: grandchild.body.id, clientMessageId: 'deep' });

    // Assess
    expect([grandchild.status, greatGrandchild.status]).toEqual([201, 201]);
    const { messages } = await storedIn(room);
    const byId = new Map(messages.map((item) => [item.id as number, item]));
    const pad = (id: number) => String(id).padStart(16, '0');
    expect(byId.get(child)).toMatchObject({ thread_root: root, thread_depth: 1, thread_path: '', gsi1sk: `01#${pad(child)}` });
    expect(byId.get(grandchild.body.id)).toMatchObject({
      parent_id: child,
      thread_root: root,
      thread_depth: 2,
      thread_path: pad(child),
      gsi1pk: `P#${project.projectId}#R#${room}#MSGS#THREAD#${root}`,
      gsi1sk: `02#${pad(child)}#${pad(grandchild.body.id)}`,
    });
    expect(byId.get(greatGrandchild.body.id)).toMatchObject({
      thread_root: root,
      thread_depth: 3,
      thread_path: `${pad(child)}#${pad(grandchild.body.id)}`,
    });
  });

  it('answers a retried reply with clientMessageId with the first answer, to a root and to a reply', async () => {
    // Prepare
    const room = await newRoom();
    const root = (await send(room, { content: 'root' })).body.id as number;
    const child = (await send(room, { content: 'child', parent_id: root })).body.id as number;

    // Act
    const toRoot = [await send(room, { content: 'r', parent_id: root, clientMessageId: 'r1' })];
    toRoot.push(await send(room, { content: 'r', parent_id: root, clientMessageId: 'r1' }));
    const toReply = [await send(room, { content: 'rr', parent_id: child, clientMessageId: 'r2' })];
    toReply.push(await send(room, { content: 'rr', parent_id: child, clientMessageId: 'r2' }));

    // Assess
    expect(toRoot.map((answer) => answer.status)).toEqual([201, 200]);
    expect(toRoot[1]?.body).toEqual(toRoot[0]?.body);
    expect(toReply.map((answer) => answer.status)).toEqual([201, 200]);
    expect(toReply[1]?.body).toEqual(toReply[0]?.body);
    const { messages, guards } = await storedIn(room);
    expect(messages).toHaveLength(4);
    expect(guards).toHaveLength(2);
    expect(messages.find((item) => item.id === toReply[0]?.body.id)).toMatchObject({ thread_root: root, thread_depth: 2 });
  });
});
