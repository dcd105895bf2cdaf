import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, clientOf, ISO_TIMESTAMP, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import {
  eventually,
  hmacSha256Hex,
  type ReceivedRequest,
  receiverAcceptsTimestampedSignature,
  startWebhookReceiver,
  unreachableUrl,
  type WebhookReceiver,
} from '../support/webhook-receiver';

/**
 * Outbound webhooks end to end: a runtime of its own with the queue consumers on (the shared one
 * runs without them), real receivers on loopback, and the retry schedule scaled down
 * (`WEBHOOK_RETRY_TIME_SCALE`) so its waits of 60 s, 5 min, 30 min and 60 min take 30 ms, 150 ms,
 * 0.9 s and 1.8 s while keeping their proportions.
 */

const OPERATOR_KEY = 'webhook-delivery-operator-key-0123';
const TIME_SCALE = 0.0005;
const TIMEOUT_MS = 300;
/** The spec's waits before attempts 2..5, in seconds. */
const SCHEDULE_SECONDS = [60, 300, 1800, 3600];
const scaledDelayMs = (afterAttempt: number) => (SCHEDULE_SECONDS[afterAttempt - 1] as number) * 1000 * TIME_SCALE;

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      WEBHOOK_RETRY_TIME_SCALE: String(TIME_SCALE),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
    },
  });
  call = clientOf(local.baseUrl);
}, 60_000);
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await local?.stop();
});

async function receiver(behaviour: WebhookReceiver['behaviour'] = 'ok'): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver({ behaviour });
  receivers.push(started);
  return started;
}

interface Project {
  readonly projectId: string;
  readonly apiKey: string;
  token(userId: string, roles?: string[]): Promise<string>;
}

/** A fresh tenant per scenario, so each sees only its own registrations and deliveries. */
async function newProject(name: string): Promise<Project> {
  const created = await call('/platform/projects', { body: { name }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
  if (created.status !== 201) throw new Error(`project creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  const { projectId, apiKey } = created.body as { projectId: string; apiKey: string };
  return {
    projectId,
    apiKey,
    async token(userId, roles) {
      const issued = await call('/auth/token', { apiKey, body: { userId, ...(roles ? { roles } : {}) } });
      if (issued.status !== 201) throw new Error(`token failed: ${issued.status}`);
      return issued.body.token as string;
    },
  };
}

/** Registers a webhook; the receiver (when given) learns the secret that registration reveals once. */
async function register(project: Project, target: WebhookReceiver | string, eventTypes: string[]): Promise<{ id: string; secret: string }> {
  const url = typeof target === 'string' ? target : target.url;
  const registered = await call('/webhooks/register', { apiKey: project.apiKey, body: { url, eventTypes } });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  if (typeof target !== 'string') target.secret = registered.body.secret;
  return { id: registered.body.id, secret: registered.body.secret };
}

/** A group room owned by a fresh author, with the given members. */
async function newRoom(project: Project, members: string[] = []) {
  const authorId = uniqueId('author');
  const author = await project.token(authorId);
  const roomId = uniqueId('room');
  const created = await call('/rooms', { token: author, body: { id: roomId, type: 'group', members } });
  if (created.status !== 201) throw new Error(`room creation failed: ${created.status}`);
  return { authorId, author, roomId };
}

interface Delivery {
  id: string;
  webhookId: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  last_http_status: number | null;
  last_error: string | null;
  updatedAt: string;
}

async function deliveries(project: Project): Promise<Delivery[]> {
  const listed = await call('/admin/webhooks/deliveries?limit=100', { apiKey: project.apiKey });
  if (listed.status !== 200) throw new Error(`listing deliveries failed: ${listed.status}`);
  return listed.body.deliveries as Delivery[];
}

const deliveryOf = async (project: Project, webhookId: string) =>
  (await deliveries(project)).find((entry) => entry.webhookId === webhookId);

interface LocalStats {
  metrics: Record<string, number>;
  stepFunctions: { executionsStarted: number; executionsRunning: number; stateTransitions: number; executionsFailed: number };
}

const stats = async () => (await call<LocalStats>('/_local/stats')).body;

/** Stats once no execution is running, so a baseline does not catch the tail of an earlier scenario. */
async function quietStats(): Promise<LocalStats> {
  await eventually('no running executions', async () => (await stats()).stepFunctions.executionsRunning === 0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  return stats();
}

const envelopeOf = (request: ReceivedRequest) =>
  JSON.parse(request.rawBody) as { type: string; projectId: string; payload: any; createdAt: string };

describe.each([{ okStatus: 200 }, { okStatus: 202 }, { okStatus: 204 }])('a message to a receiver answering $okStatus', ({ okStatus }) => {
  let project: Project;
  let hook: { id: string; secret: string };
  let target: WebhookReceiver;
  let authorId: string;
  let roomId: string;
  let posted: ApiResponse;
  let arrived: ReceivedRequest;
  let delivered: Delivery;
  let before: LocalStats;
  let after: LocalStats;

  beforeAll(async () => {
    project = await newProject('webhook-success');
    target = await receiver('ok');
    target.okStatus = okStatus;
    hook = await register(project, target, ['message.created']);
    let author: string;
    ({ authorId, author, roomId } = await newRoom(project));
    before = await quietStats();

    posted = await call('/messages', { token: author, body: { roomId, content: `hello webhooks ${okStatus}` } });
    [arrived] = (await target.waitForRequests(1)) as [ReceivedRequest];
    delivered = await eventually('the delivery to be delivered', async () => {
      const delivery = await deliveryOf(project, hook.id);
      return delivery?.status === 'delivered' ? delivery : undefined;
    });
    // Anything an execution would do after the attempt would show within this pause.
    await new Promise((resolve) => setTimeout(resolve, 200));
    after = await stats();
  }, 30_000);

  it('arrives as message.created: a POST with the envelope of the posted message', () => {
    // Assess
    expect(posted.status).toBe(201);
    expect(arrived.method).toBe('POST');
    expect(arrived.path).toBe('/hook');
    expect(envelopeOf(arrived)).toEqual({
      type: 'message.created',
      projectId: project.projectId,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      payload: expect.objectContaining({ roomId, messageId: posted.body.id, userId: authorId, content: `hello webhooks ${okStatus}` }),
    });
  });

  it('carries every header, and a signature the receiver verifies with its own HMAC', () => {
    // Assess
    expect(arrived.headers['content-type']).toBe('application/json');
    expect(arrived.headers['x-service-event']).toBe('message.created');
    expect(arrived.headers['x-service-project-id']).toBe(project.projectId);
    expect(arrived.headers['x-service-delivery-id']).toBe(delivered.id);
    expect(arrived.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(arrived.headers['x-service-signature']).toBe(hmacSha256Hex(hook.secret, arrived.rawBody));
    expect(arrived.signatureValid).toBe(true);
    expect(hmacSha256Hex(`${hook.secret}x`, arrived.rawBody)).not.toBe(arrived.headers['x-service-signature']);
  });

  it('carries the time of the attempt and a signature over it, the delivery id and the body, which the receiver checks with its own HMAC', () => {
    // Prepare
    const timestamp = arrived.headers['x-service-timestamp'] as string;

    // Assess
    expect(timestamp).toMatch(/^\d{10}$/);
    expect(Math.abs(arrived.receivedAt / 1000 - Number(timestamp))).toBeLessThan(5);
    expect(arrived.headers['x-service-signature-v2']).toBe(hmacSha256Hex(hook.secret, `${timestamp}.${delivered.id}.${arrived.rawBody}`));
    expect(arrived.timestampedSignatureValid).toBe(true);
    // The same request replayed after the window, or its body under another delivery id, is refused.
    expect(receiverAcceptsTimestampedSignature(hook.secret, arrived.rawBody, arrived.headers, Number(timestamp) + 301)).toBe(false);
    const otherId = { ...arrived.headers, 'x-service-delivery-id': `${delivered.id}x` };
    expect(receiverAcceptsTimestampedSignature(hook.secret, arrived.rawBody, otherId)).toBe(false);
  });

  it('is listed as delivered after one attempt, with the receiver status', () => {
    // Assess
    expect(target.requests).toHaveLength(1);
    expect(delivered).toMatchObject({
      webhookId: hook.id,
      eventType: 'message.created',
      status: 'delivered',
      attempt_count: 1,
      next_attempt_at: null,
      last_http_status: okStatus,
      last_error: null,
    });
  });

  it('costs no Step Functions execution or state transition', () => {
    // Assess
    expect(after.stepFunctions.executionsStarted).toBe(before.stepFunctions.executionsStarted);
    expect(after.stepFunctions.stateTransitions).toBe(before.stepFunctions.stateTransitions);
    expect(after.metrics.webhook_delivery_failed ?? 0).toBe(before.metrics.webhook_delivery_failed ?? 0);
  });
});

describe('event types reach the registrations subscribed to them, and no others', () => {
  const subscriptions = [
    { name: 'message.created only', eventTypes: ['message.created'], expected: ['message.created'] },
    { name: 'mention only', eventTypes: ['mention'], expected: ['mention'] },
    { name: 'moderation.auto_flag only', eventTypes: ['moderation.auto_flag'], expected: ['moderation.auto_flag'] },
    {
      name: 'mention and moderation.auto_flag',
      eventTypes: ['mention', 'moderation.auto_flag'],
      expected: ['mention', 'moderation.auto_flag'],
    },
    { name: 'types this message does not raise', eventTypes: ['report.created', 'message.updated', 'room.summary'], expected: [] },
  ];
  let project: Project;
  let roomId: string;
  let authorId: string;
  let messageId: number;
  const mentionedId = 'bob';
  const byName = new Map<string, { receiver: WebhookReceiver; secret: string }>();

  beforeAll(async () => {
    project = await newProject('webhook-routing');
    await call('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['forbiddenword'] } });
    await Promise.all(
      subscriptions.map(async ({ name, eventTypes }) => {
        const target = await receiver('ok');
        byName.set(name, { receiver: target, secret: (await register(project, target, eventTypes)).secret });
      }),
    );
    let author: string;
    ({ authorId, author, roomId } = await newRoom(project, [mentionedId]));

    const posted = await call('/messages', {
      token: author,
      body: { roomId, content: `hi @${mentionedId}, this has a forbiddenword in it` },
    });
    if (posted.status !== 201) throw new Error(`message failed: ${posted.status}`);
    messageId = posted.body.id;
    await Promise.all(subscriptions.map(({ name, expected }) => byName.get(name)?.receiver.waitForRequests(expected.length)));
    // Events of one message are published together; a stray one would arrive within this pause.
    await new Promise((resolve) => setTimeout(resolve, 750));
  }, 30_000);

  it.each(subscriptions)('a registration for $name receives exactly $expected', ({ name, expected }) => {
    // Prepare
    const { receiver: target } = byName.get(name)!;

    // Assess
    expect(target.requests.map((request) => request.headers['x-service-event']).sort()).toEqual(expected);
    expect(target.requests.map((request) => envelopeOf(request).type).sort()).toEqual(expected);
    expect(target.requests.every((request) => request.signatureValid)).toBe(true);
  });

  it('a mention carries roomId, messageId and mentionedUserId', () => {
    // Prepare
    const mention = byName.get('mention only')!.receiver.requests[0]!;

    // Assess
    expect(envelopeOf(mention)).toEqual({
      type: 'mention',
      projectId: project.projectId,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      payload: expect.objectContaining({ roomId, messageId, mentionedUserId: mentionedId }),
    });
  });

  it('moderation.auto_flag carries roomId, messageId and a reason naming the blocked term', () => {
    // Prepare
    const flag = byName.get('moderation.auto_flag only')!.receiver.requests[0]!;

    // Assess
    expect(envelopeOf(flag)).toEqual({
      type: 'moderation.auto_flag',
      projectId: project.projectId,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      payload: expect.objectContaining({ roomId, messageId, userId: authorId, reason: expect.stringContaining('forbiddenword') }),
    });
  });

  it('lists one delivery per subscribed registration and event, none for the others', async () => {
    // Act
    const listed = await deliveries(project);

    // Assess
    const expectedCount = subscriptions.reduce((sum, { expected }) => sum + expected.length, 0);
    expect(listed).toHaveLength(expectedCount);
    expect(listed.every((delivery) => delivery.status === 'delivered')).toBe(true);
  });
});

describe('a receiver that never succeeds', () => {
  const failing = [
    { name: 'answers 500', behaviour: 'error' as const, lastHttpStatus: 500, lastError: /^HTTP 500/ },
    {
      name: 'never answers (timeout)',
      behaviour: 'hang' as const,
      lastHttpStatus: null,
      lastError: new RegExp(`timed out after ${TIMEOUT_MS} ms`),
    },
    { name: 'is an unreachable port', behaviour: undefined, lastHttpStatus: null, lastError: /ECONNREFUSED/ },
  ];
  let project: Project;
  const setups = new Map<string, { receiver?: WebhookReceiver; webhookId: string; secret: string }>();
  /** Every state of each delivery seen while polling, by attempt count. */
  const seen = new Map<string, Map<number, Delivery>>();
  const finals = new Map<string, Delivery>();
  let failedBefore: number;
  let failedAfter: number;
  let replayWhilePending: ApiResponse | undefined;
  let healthy: { receiver: WebhookReceiver; webhookId: string };

  const setupOf = (name: string) => setups.get(name)!;
  const finalOf = (name: string) => finals.get(setupOf(name).webhookId)!;

  beforeAll(async () => {
    // Prepare: three failing registrations and a healthy one, all for message.created of one project.
    project = await newProject('webhook-failures');
    await Promise.all(
      failing.map(async ({ name, behaviour }) => {
        const target = behaviour ? await receiver(behaviour) : undefined;
        const registered = await register(project, target ?? (await unreachableUrl()), ['message.created']);
        setups.set(name, { receiver: target, webhookId: registered.id, secret: registered.secret });
      }),
    );
    const healthyReceiver = await receiver('ok');
    healthy = { receiver: healthyReceiver, webhookId: (await register(project, healthyReceiver, ['message.created'])).id };
    const { author, roomId } = await newRoom(project);
    failedBefore = (await quietStats()).metrics.webhook_delivery_failed ?? 0;

    // Act: one message, then watch the schedule run to its end.
    await call('/messages', { token: author, body: { roomId, content: 'this will not get through' } });
    const webhookIds = failing.map(({ name }) => setupOf(name).webhookId);
    await eventually(
      'all failing deliveries to end failed',
      async () => {
        const listed = await deliveries(project);
        for (const delivery of listed) {
          const states = seen.get(delivery.id) ?? new Map<number, Delivery>();
          if (!states.has(delivery.attempt_count) || delivery.status !== 'pending') states.set(delivery.attempt_count, delivery);
          seen.set(delivery.id, states);
          if (webhookIds.includes(delivery.webhookId)) finals.set(delivery.webhookId, delivery);
        }
        const pending500 = listed.find((delivery) => delivery.webhookId === setupOf('answers 500').webhookId);
        if (!replayWhilePending && pending500?.status === 'pending' && pending500.attempt_count >= 1 && pending500.attempt_count <= 3) {
          replayWhilePending = await call(`/admin/webhooks/deliveries/${pending500.id}/replay`, { method: 'POST', apiKey: project.apiKey });
        }
        return finals.size === webhookIds.length && [...finals.values()].every((delivery) => delivery.status === 'failed');
      },
      25_000,
      15,
    );
    failedAfter = (await quietStats()).metrics.webhook_delivery_failed ?? 0;
  }, 40_000);

  describe.each(failing)('that $name', ({ name, lastHttpStatus, lastError }) => {
    it('is attempted 5 times and ends failed, with last_http_status and last_error', () => {
      // Assess
      expect(finalOf(name)).toMatchObject({
        eventType: 'message.created',
        status: 'failed',
        attempt_count: 5,
        next_attempt_at: null,
        last_http_status: lastHttpStatus,
        last_error: expect.stringMatching(lastError),
      });
    });

    it('gets next_attempt_at set on the schedule (60 s : 5 min : 30 min : 60 min, scaled) after each failed attempt', () => {
      // Prepare
      const states = seen.get(finalOf(name).id)!;

      // Assess: the longer waits are always observed; every pending state seen is on the schedule.
      expect([...states.keys()]).toEqual(expect.arrayContaining([3, 4, 5]));
      for (const [attempts, state] of states) {
        if (attempts === 0 || state.status !== 'pending') continue;
        const wait = Date.parse(state.next_attempt_at!) - Date.parse(state.updatedAt);
        expect(wait, `wait after attempt ${attempts}`).toBeGreaterThanOrEqual(scaledDelayMs(attempts) - 10);
        expect(wait, `wait after attempt ${attempts}`).toBeLessThanOrEqual(scaledDelayMs(attempts) + 10);
      }
    });
  });

  describe.each(failing.filter(({ behaviour }) => behaviour !== undefined))('that $name', ({ name, behaviour }) => {
    it('receives five attempts with one delivery id, one body and valid signatures', () => {
      // Prepare
      const { receiver: target } = setupOf(name);
      const attempts = target!.requests.slice(0, 5);

      // Assess
      expect(attempts).toHaveLength(5);
      expect(new Set(attempts.map((request) => request.headers['x-service-delivery-id']))).toEqual(new Set([finalOf(name).id]));
      expect(new Set(attempts.map((request) => request.rawBody)).size).toBe(1);
      expect(new Set(attempts.map((request) => request.headers['x-service-signature'])).size).toBe(1);
      expect(attempts.every((request) => request.signatureValid)).toBe(true);
      expect(attempts.every((request) => request.timestampedSignatureValid)).toBe(true);
    });

    it('receives them spaced in the proportions of the schedule', () => {
      // Prepare
      const arrivals = setupOf(name)
        .receiver!.requests.slice(0, 5)
        .map((request) => request.receivedAt);
      const gaps = arrivals.slice(1).map((at, index) => at - (arrivals[index] as number));
      const attemptTime = behaviour === 'hang' ? TIMEOUT_MS : 0;

      // Assess: each gap is the attempt's own duration plus its wait (plus the machinery's overhead,
      // hence the generous upper bound); the gaps grow with the schedule. The attempt's timeout
      // runs from the start of the call, connecting included, not from the request's arrival, so
      // an arrival that took longer than the next one shortens the gap by the difference: 20 %
      // slack on both parts.
      expect(gaps).toHaveLength(4);
      gaps.forEach((gap, index) => {
        const delay = scaledDelayMs(index + 1);
        const label = `gap before attempt ${index + 2} in ${JSON.stringify(gaps)} ms`;
        expect(gap, label).toBeGreaterThanOrEqual(0.8 * (delay + attemptTime));
        expect(gap, label).toBeLessThanOrEqual(delay + attemptTime + 2500);
      });
      // The first gap also holds the start of the retry workflow (the queue's first attempt starts
      // it), hundreds of ms on a loaded machine against a scheduled difference of 120 ms to the
      // second; from the second on, the schedule's steps (750 ms, 900 ms) outgrow that noise.
      const scheduled = gaps.slice(1);
      expect(
        [...scheduled].sort((a, b) => a - b),
        `gaps ${JSON.stringify(gaps)} ms`,
      ).toEqual(scheduled);
    });
  });

  it('raises webhook_delivery_failed by exactly the number of failed deliveries', () => {
    // Assess
    expect(failedAfter - failedBefore).toBe(failing.length);
  });

  it('leaves the healthy registration of the same event delivered after one attempt', async () => {
    // Act
    const delivery = await deliveryOf(project, healthy.webhookId);

    // Assess
    expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 1, last_http_status: 200 });
    expect(healthy.receiver.requests).toHaveLength(1);
  });

  it('refuses to replay a delivery that is still pending: 409 delivery_not_failed', () => {
    // Assess
    expect(replayWhilePending?.status).toBe(409);
    expect(replayWhilePending?.body.error.code).toBe('delivery_not_failed');
  });

  describe.each(failing.filter(({ behaviour }) => behaviour !== undefined))(
    'replayed after the receiver that $name is fixed',
    ({ name }) => {
      let replayed: ApiResponse;
      let delivered: Delivery;
      let admin: string;

      beforeAll(async () => {
        // Prepare
        const { receiver: target } = setupOf(name);
        target!.behaviour = 'ok';
        admin = await project.token(uniqueId('admin'), ['admin']);

        // Act
        replayed = await call(`/admin/webhooks/deliveries/${finalOf(name).id}/replay`, { method: 'POST', token: admin });
        delivered = await eventually('the replayed delivery to be delivered', async () => {
          const delivery = await deliveryOf(project, setupOf(name).webhookId);
          return delivery?.status === 'delivered' ? delivery : undefined;
        });
      }, 20_000);

      it('answers 202 with the delivery pending again and its attempts reset', () => {
        // Assess
        expect(replayed.status).toBe(202);
        expect(replayed.body).toMatchObject({ id: finalOf(name).id, status: 'pending', attempt_count: 0 });
      });

      it('delivers it once, with the same delivery id, body and a valid signature', () => {
        // Prepare
        const { receiver: target } = setupOf(name);
        const [first] = target!.requests;
        const last = target!.requests.at(-1)!;

        // Assess
        expect(target!.requests).toHaveLength(6);
        expect(last.headers['x-service-delivery-id']).toBe(finalOf(name).id);
        expect(last.rawBody).toBe(first!.rawBody);
        expect(last.signatureValid).toBe(true);
        expect(delivered).toMatchObject({
          status: 'delivered',
          attempt_count: 1,
          last_http_status: 200,
          last_error: null,
          next_attempt_at: null,
        });
      });

      it('answers 409 delivery_not_failed to a second replay', async () => {
        // Act
        const again = await call(`/admin/webhooks/deliveries/${finalOf(name).id}/replay`, { method: 'POST', token: admin });

        // Assess
        expect(again.status).toBe(409);
        expect(again.body.error.code).toBe('delivery_not_failed');
      });
    },
  );

  it('does not count a successful replay as another failure', async () => {
    // Act
    const now = (await quietStats()).metrics.webhook_delivery_failed ?? 0;

    // Assess
    expect(now - failedBefore).toBe(failing.length);
  });

  it.each([
    { case: 'an unknown delivery id', id: `whd_${'0'.repeat(32)}`, status: 404, code: 'delivery_not_found' },
    { case: 'a malformed delivery id', id: 'not-a-delivery', status: 400, code: 'validation_failed' },
  ])('answers $status to a replay of $case', async ({ id, status, code }) => {
    // Act
    const replayed = await call(`/admin/webhooks/deliveries/${id}/replay`, { method: 'POST', apiKey: project.apiKey });

    // Assess
    expect(replayed.status).toBe(status);
    expect(replayed.body.error.code).toBe(code);
  });

  describe.each([
    { role: 'member', list: 403 },
    { role: 'moderator', list: 200 },
  ])('a $role', ({ role, list }) => {
    it('may not replay (403), and the delivery stays failed', async () => {
      // Prepare
      const token = await project.token(uniqueId(role), [role]);
      const { id } = finalOf('is an unreachable port');

      // Act
      const replayed = await call(`/admin/webhooks/deliveries/${id}/replay`, { method: 'POST', token });

      // Assess
      expect(replayed.status).toBe(403);
      expect((await deliveryOf(project, setupOf('is an unreachable port').webhookId))?.status).toBe('failed');
    });

    it(`gets ${list} listing deliveries`, async () => {
      // Prepare
      const token = await project.token(uniqueId(role), [role]);

      // Act
      const listed = await call('/admin/webhooks/deliveries', { token });

      // Assess
      expect(listed.status).toBe(list);
      if (list === 200)
        expect(listed.body.deliveries.map((delivery: Delivery) => delivery.id)).toContain(finalOf('is an unreachable port').id);
    });
  });

  describe('another project', () => {
    it('does not see these deliveries in its listing', async () => {
      // Prepare
      const other = await newProject('webhook-other');

      // Act
      const listed = await call('/admin/webhooks/deliveries', { apiKey: other.apiKey });

      // Assess
      expect(listed.status).toBe(200);
      expect(listed.body.deliveries).toEqual([]);
    });

    it("cannot replay this project's failed delivery: 404, and it stays failed", async () => {
      // Prepare
      const other = await newProject('webhook-other');
      const { id } = finalOf('is an unreachable port');

      // Act
      const replayed = await call(`/admin/webhooks/deliveries/${id}/replay`, { method: 'POST', apiKey: other.apiKey });

      // Assess
      expect(replayed.status).toBe(404);
      expect((await deliveryOf(project, setupOf('is an unreachable port').webhookId))?.status).toBe('failed');
    });
  });
});

describe('a receiver that redirects', () => {
  it('is not followed: the attempt fails with the 3xx status and the redirect target receives nothing', async () => {
    // Prepare: the webhook URL answers 307 to a healthy receiver
    const target = await receiver('ok');
    const redirector = createServer((_request, response) => response.writeHead(307, { location: target.url }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    const project = await newProject('redirect');
    const { id } = await register(project, `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/hook`, ['message.created']);
    const { author, roomId } = await newRoom(project);

    try {
      // Act
      expect((await call('/messages', { token: author, body: { roomId, content: 'redirect me' } })).status).toBe(201);

      // Assess
      const delivery = await eventually('the first attempt is recorded', async () => {
        const found = await deliveryOf(project, id);
        return found && found.attempt_count >= 1 ? found : undefined;
      });
      expect(delivery.last_http_status).toBe(307);
      expect(delivery.last_error).toMatch(/redirect/);
      expect(delivery.status).not.toBe('delivered');
      expect(target.requests).toHaveLength(0);
    } finally {
      redirector.closeAllConnections();
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });
});
