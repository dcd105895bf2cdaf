import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitEvents, newEvent, outboxPut } from '#domain/events/outbox';
import { EVENTS_PUBLISH_FAILED_METRIC } from '#domain/events/publisher';
import { messageKey } from '#shared/db/message';
import { outboxKey } from '#shared/db/outbox';
import { webhookKey } from '#shared/db/webhook';
import { addMetricSink } from '#shared/metrics';
import { handler as dispatchWebhooks } from '../../functions/workers/dispatch-webhooks';
import { handler as publishEvents } from '../../functions/workers/publish-events';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';
import { collectEvents, eventsOf } from '../support/events';
import { get, raw, table } from '../support/raw-table';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connectUser, type RoomSocket } from '../support/ws';

/**
 * The outbox's guarantees against the real stand-ins (DynamoDB Local and its stream, the SNS/SQS
 * stand-in): a write DynamoDB refuses emits nothing; a stream record handed over twice republishes
 * the same event ids, and each subscriber still acts once; a subscriber that fails one event of a
 * batch retries that one only.
 */

const context = {} as Context;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let receiver: WebhookReceiver;
const sockets: RoomSocket[] = [];
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
  await receiver.close();
});

/** A project whose `message.created` webhook posts to the receiver. */
async function subscribedProject(): Promise<TestProject> {
  const project = await createTestProject('outbox');
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: receiver.url, eventTypes: ['message.created'] },
  });
  expect(registered.status).toBe(201);
  receiver.secret = registered.body.secret;
  return project;
}

const deliveriesOf = (projectId: string) =>
  receiver.requests
    .filter((request) => request.headers['x-service-project-id'] === projectId)
    .map((request) => JSON.parse(request.rawBody));

describe('a write with its events', () => {
  it('emits nothing when DynamoDB refuses it, and its event once when it succeeds', async () => {
    // Prepare
    const project = await createTestProject('outbox');
    const guarded = { pk: `P#${project.projectId}#TEST`, sk: uniqueId('guarded') };
    await raw.send(new PutCommand({ TableName: table(), Item: guarded }));
    const refusedEvent = newEvent('user.event', project.projectId, { userId: 'u', event: 'refused', data: {} });
    const acceptedEvent = newEvent('user.event', project.projectId, { userId: 'u', event: 'accepted', data: {} });
    const write = (key: typeof guarded, event: typeof refusedEvent) =>
      raw.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table(), Item: key, ConditionExpression: 'attribute_not_exists(pk)' } },
            { ...outboxPut(event), Put: { ...outboxPut(event).Put, TableName: table() } },
          ],
        }),
      );

    // Act
    const refused = await write(guarded, refusedEvent).then(
      () => 'written',
      (error: Error) => error.name,
    );
    await write({ ...guarded, sk: uniqueId('fresh') }, acceptedEvent);
    const events = await collectEvents(eventsOf(project.projectId), { count: 1, settleMs: 1500 });

    // Assess
    expect(refused).toBe('TransactionCanceledException');
    expect(events).toEqual([acceptedEvent]);
  });

  it('emits a batch of outbox events, each once', async () => {
    // Prepare
    const project = await createTestProject('outbox');
    const batch = Array.from({ length: 30 }, (_, index) =>
      newEvent('cache_miss', project.projectId, { roomId: `room-${index}`, at: new Date().toISOString() }),
    );

    // Act
    await emitEvents(batch);
    const events = await collectEvents(eventsOf(project.projectId), { count: 30, settleMs: 1000 });

    // Assess
    expect(events.map((event) => event.id).sort()).toEqual(batch.map((event) => event.id).sort());
  });
});

describe('a stream record whose event breaks the catalogue', () => {
  it('is passed over without holding back the events written after it', async () => {
    // Prepare
    const project = await createTestProject('outbox');
    const broken = {
      id: uniqueId('broken'),
      type: 'no.such.type',
      projectId: project.projectId,
      payload: {},
      createdAt: new Date().toISOString(),
    };
    const after = newEvent('user.event', project.projectId, { userId: 'u', event: 'after the broken one', data: {} });

    // Act
    await raw.send(new PutCommand({ TableName: table(), Item: { ...outboxKey(project.projectId, broken.id), event: broken } }));
    await emitEvents([after]);
    const events = await collectEvents(eventsOf(project.projectId), { count: 1, settleMs: 1000 });

    // Assess
    expect(events).toEqual([after]);
  });
});

describe('stream records the topic refuses', () => {
  it('go back to the stream from the first one, and each counts as events_publish_failed (the publisher alarm)', async () => {
    // Prepare: three outbox records; the topic they go to is gone (deleted, or the wrong ARN)
    const project = await createTestProject('outbox');
    const events = Array.from({ length: 3 }, (_, index) =>
      newEvent('user.event', project.projectId, { userId: 'u', event: `refused ${index}`, data: {} }),
    );
    const records: DynamoDBStreamEvent['Records'] = events.map((event, index) => {
      const key = outboxKey(project.projectId, event.id);
      return {
        eventName: 'INSERT',
        dynamodb: { Keys: marshall(key) as never, NewImage: marshall({ ...key, event }) as never, SequenceNumber: String(index + 1) },
      };
    });
    const counted: number[] = [];
    addMetricSink((name, value) => {
      if (name === EVENTS_PUBLISH_FAILED_METRIC) counted.push(value);
    });
    const topicArn = process.env.EVENTS_TOPIC_ARN;
    process.env.EVENTS_TOPIC_ARN = `${topicArn}-deleted`;

    // Act
    const answer = await publishEvents({ Records: records }, context).finally(() => {
      process.env.EVENTS_TOPIC_ARN = topicArn;
    });

    // Assess
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
    expect(counted).toEqual([3]);
  });
});

describe('a stream record handed over twice', () => {
  it('publishes the same event ids again, and the webhook and the watcher each act once', async () => {
    // Prepare
    const project = await subscribedProject();
    const [alice, bob] = [uniqueId('alice'), uniqueId('bob')];
    const [aliceToken, bobToken] = await Promise.all([project.token(alice), project.token(bob)]);
    const roomId = uniqueId('room');
    await api('/rooms', { token: aliceToken, body: { id: roomId, type: 'group', members: [bob] } });
    await api(`/users/${bob}/watchlist`, { token: bobToken, body: { type: 'room', targetId: roomId } });
    const bobChannel = await connectUser(bob, bobToken);
    sockets.push(bobChannel);
    const posted = await api('/messages', { token: aliceToken, body: { roomId, content: 'once, whatever happens' } });
    const [first] = await collectEvents(eventsOf(project.projectId, 'message.created'));
    await bobChannel.next((frame) => frame.type === 'watchlist_event', 10_000);
    const key = messageKey(project.projectId, roomId, posted.body.id);
    const item = await get(key.pk, key.sk);
    const record: DynamoDBStreamEvent['Records'][number] = {
      eventName: 'INSERT',
      dynamodb: { Keys: marshall(key) as never, NewImage: marshall(item, { removeUndefinedValues: true }) as never, SequenceNumber: '1' },
    };

    // Act
    const again = await publishEvents({ Records: [record] }, context);
    const [repeated] = await collectEvents(eventsOf(project.projectId, 'message.created'));
    await sleep(1500);

    // Assess
    expect(again).toEqual({ batchItemFailures: [] });
    expect(repeated?.id).toBe(first?.id);
    expect(deliveriesOf(project.projectId).map((body) => body.payload.messageId)).toEqual([posted.body.id]);
    expect(bobChannel.ofType('watchlist_event').map((frame) => frame.message.id)).toEqual([posted.body.id]);
  });
});

describe('a subscriber that fails one event of a batch', () => {
  it('reports that one only, and its retry does not repeat the work done for the others', async () => {
    // Prepare
    const [healthy, poisoned] = await Promise.all([subscribedProject(), createTestProject('poisoned')]);
    // A registration that no longer parses: every dispatch of the project's events fails.
    await raw.send(new PutCommand({ TableName: table(), Item: { ...webhookKey(poisoned.projectId, 'wh_broken'), url: 42 } }));
    const created = (projectId: string, messageId: number) =>
      newEvent('message.created', projectId, {
        roomId: 'room',
        messageId,
        userId: 'u',
        content: `message ${messageId}`,
        parent_id: null,
        attachments: [],
        createdAt: new Date().toISOString(),
      });
    const events = [created(healthy.projectId, 1), created(poisoned.projectId, 2), created(healthy.projectId, 3)];
    const sqsEvent = (batch: typeof events): SQSEvent => ({
      Records: batch.map((event) => ({ messageId: event.id, body: JSON.stringify(event) }) as SQSEvent['Records'][number]),
    });

    // Act
    const first = await dispatchWebhooks(sqsEvent(events), context);
    const retry = await dispatchWebhooks(sqsEvent([events[1] as (typeof events)[number]]), context);

    // Assess
    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: events[1]?.id }] });
    expect(retry).toEqual({ batchItemFailures: [{ itemIdentifier: events[1]?.id }] });
    expect(
      deliveriesOf(healthy.projectId)
        .map((body) => body.payload.messageId)
        .sort(),
    ).toEqual([1, 3]);
  });
});
