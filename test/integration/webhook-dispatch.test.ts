import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '#domain/projects/projects';
import { deliveryIdFor, dispatchEvent, FIRST_ATTEMPT_HOLD_MS } from '#domain/webhooks/deliveries';
import { listWebhooks, registerWebhook } from '#domain/webhooks/registrations';
import { deliveriesIndexKey, deliveryKey, reopenFailedDelivery } from '#shared/db/webhook-delivery';
import { type DomainEvent, domainEvent } from '#shared/events';
import { uniqueId } from '../support/api';
import { get, raw, table } from '../support/raw-table';

/**
 * The webhook subscriber against DynamoDB Local: SNS and SQS deliver at least once, so dispatching
 * the same event again must neither send twice nor strand a delivery that an earlier try left pending.
 */

let receiver: Server;
const received: { deliveryId: string; body: string }[] = [];
/** How long the receiver takes to answer: long enough, a first attempt is still under way when the event comes again. */
let answerAfterMs = 0;
beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ deliveryId: String(request.headers['x-service-delivery-id']), body });
      setTimeout(() => response.writeHead(204).end(), answerAfterMs);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

async function subscribedProject() {
  const { projectId } = await createProject({ name: 'dispatch', projectId: uniqueId('int').toLowerCase() });
  const { port } = receiver.address() as AddressInfo;
  await registerWebhook(projectId, { url: `http://127.0.0.1:${port}/hook`, eventTypes: ['message.created'] }, 'test');
  const event: DomainEvent = domainEvent(
    'message.created',
    projectId,
    { roomId: 'r', messageId: 1, userId: 'u', content: 'hi', parent_id: null, attachments: [], createdAt: new Date().toISOString() },
    { id: uniqueId('event') },
  );
  return { projectId, event };
}

describe('dispatching an event', () => {
  it('twice (a queue redelivery) makes one delivery and one POST', async () => {
    // Prepare
    const { event } = await subscribedProject();

    // Act
    const first = await dispatchEvent(event);
    const again = await dispatchEvent(event);

    // Assess
    expect(first).toEqual({ deliveries: 1, retrying: 0 });
    expect(again).toEqual({ deliveries: 0, retrying: 0 });
    expect(received.filter((request) => request.body.includes(event.projectId))).toHaveLength(1);
  });

  it('twice at once (a republished record while the first attempt is under way) posts once', async () => {
    // Prepare
    const { event } = await subscribedProject();
    answerAfterMs = 300;

    // Act
    const outcomes = await Promise.all([dispatchEvent(event), dispatchEvent(event)]).finally(() => {
      answerAfterMs = 0;
    });

    // Assess
    expect(outcomes.map((outcome) => outcome.deliveries).sort()).toEqual([0, 1]);
    expect(received.filter((request) => request.body.includes(event.projectId))).toHaveLength(1);
  });

  /** A delivery record as an earlier try left it, with the first attempt's hold as given. */
  async function leftDelivery(status: 'pending' | 'failed', attemptingUntil?: number) {
    const { projectId, event } = await subscribedProject();
    const [webhook] = await listWebhooks(projectId);
    const deliveryId = deliveryIdFor(event.id, String(webhook?.id));
    const now = new Date().toISOString();
    await raw.send(
      new PutCommand({
        TableName: table(),
        Item: {
          ...deliveryKey(projectId, deliveryId),
          gsi1pk: deliveriesIndexKey(projectId),
          gsi1sk: `${now}#${deliveryId}`,
          projectId,
          deliveryId,
          webhookId: webhook?.id,
          eventType: 'message.created',
          body: JSON.stringify({ type: 'message.created', projectId, payload: {}, createdAt: now }),
          status,
          attempt_count: status === 'failed' ? 5 : 0,
          next_attempt_at: status === 'failed' ? null : now,
          last_http_status: null,
          last_error: null,
          createdAt: now,
          updatedAt: now,
          ...(attemptingUntil === undefined ? {} : { attempting_until: attemptingUntil }),
        },
      }),
    );
    return { projectId, event, deliveryId };
  }
  const postsOf = (deliveryId: string) => received.filter((request) => request.deliveryId === deliveryId);

  it.each([
    ['with no hold (stored before holds)', undefined],
    ['whose hold has run out (the consumer died)', -1],
  ])('again resumes a delivery an earlier try left pending before its first attempt, %s', async (_, holdFromNow) => {
    // Prepare
    const { projectId, event, deliveryId } = await leftDelivery(
      'pending',
      holdFromNow === undefined ? undefined : Date.now() + holdFromNow,
    );

    // Act
    await dispatchEvent(event);

    // Assess
    expect(await get(deliveryKey(projectId, deliveryId).pk, 'DELIVERY')).toMatchObject({
      status: 'delivered',
      attempt_count: 1,
      last_http_status: 204,
    });
    expect(postsOf(deliveryId)).toHaveLength(1);
  });

  it('again leaves a first attempt another holds to it', async () => {
    // Prepare
    const { projectId, event, deliveryId } = await leftDelivery('pending', Date.now() + FIRST_ATTEMPT_HOLD_MS);

    // Act
    const outcome = await dispatchEvent(event);

    // Assess
    expect(outcome).toEqual({ deliveries: 0, retrying: 0 });
    expect(await get(deliveryKey(projectId, deliveryId).pk, 'DELIVERY')).toMatchObject({ status: 'pending', attempt_count: 0 });
    expect(postsOf(deliveryId)).toHaveLength(0);
  });

  it('again, after a replay reopened the delivery, leaves it to the replay', async () => {
    // Prepare
    const { projectId, event, deliveryId } = await leftDelivery('failed');
    const now = new Date().toISOString();
    await reopenFailedDelivery(projectId, deliveryId, now, Date.parse(now) + FIRST_ATTEMPT_HOLD_MS);

    // Act
    await dispatchEvent(event);

    // Assess
    expect(postsOf(deliveryId)).toHaveLength(0);
  });
});
