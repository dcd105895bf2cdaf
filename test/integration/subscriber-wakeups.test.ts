import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSubscribers } from '#wiring';
import { clientOf } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { eventually, startWebhookReceiver, unreachableUrl, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * Subscribers wake only when needed (issue 29, point 3), counted where Lambda would bill them: the
 * invocations of each subscriber's handler (`lambda.byFunction` of `/_local/stats`) on a runtime of
 * its own (`bin/local.ts`, all consumers, nothing else sending), so no other suite's messages count.
 * Without AI (the default), a plain message wakes the figure counter alone; each feature a message
 * or its room has wakes exactly the subscribers that serve it. `CACHE_TTL_MS=0`: a room's flags
 * reach the next message at once (with a cache they may take `CACHE_TTL_MS`, as documented).
 */

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let receiver: WebhookReceiver;
let sequence = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++sequence}`;
const subscriberIds = eventSubscribers.map((subscriber) => subscriber.id);

beforeAll(async () => {
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      CACHE_TTL_MS: '0',
      RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // Bridged messages are relayed to a port nothing listens on, never to the real Slack.
      SLACK_API_BASE_URL: (await unreachableUrl()).replace(/\/hook$/, ''),
      AI_BASE_URL: '',
    },
  });
  call = clientOf(local.baseUrl);
  receiver = await startWebhookReceiver();
}, 90_000);
afterAll(async () => {
  await receiver?.close();
  await local?.stop();
});

interface User {
  readonly userId: string;
  readonly token: string;
}

async function user(name: string): Promise<User> {
  const userId = unique(name);
  const issued = await call('/auth/token', { apiKey: local.apiKey, body: { userId } });
  if (issued.status !== 201) throw new Error(`token failed: ${issued.status}`);
  return { userId, token: issued.body.token as string };
}

async function room(members: readonly User[]): Promise<string> {
  const roomId = unique('room');
  const created = await call('/rooms', {
    apiKey: local.apiKey,
    body: { id: roomId, type: 'group', members: members.map((m) => m.userId) },
  });
  if (created.status !== 201) throw new Error(`room failed: ${created.status} ${JSON.stringify(created.body)}`);
  return roomId;
}

async function post(author: User, roomId: string, content: string, extra: Record<string, unknown> = {}) {
  const sent = await call('/messages', { token: author.token, body: { roomId, content, ...extra } });
  expect(sent.status).toBe(201);
  return sent.body as { id: number };
}

async function stats() {
  return (await call('/_local/stats')).body as { metrics: Record<string, number>; lambda: { byFunction: Record<string, number> } };
}

/** The invocations once none has been added for two seconds: the events of the preparation (room joins, say) are done with. */
async function settled(): Promise<Record<string, number>> {
  const ofSubscribers = (counts: Record<string, number>) => JSON.stringify(subscriberIds.map((id) => counts[id] ?? 0));
  let last = ofSubscribers((await stats()).lambda.byFunction);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const now = (await stats()).lambda.byFunction;
    if (ofSubscribers(now) === last) return now;
    last = ofSubscribers(now);
  }
}

/**
 * The subscriber invocations `act` causes: every message reaches the figure counter, so once its
 * count has moved the events are on every queue they match. The subscribers the test expects
 * besides it (`expected`) are waited for, however long a loaded machine takes their long polls;
 * the pause after that lets any other receiver (long polls of one second) take a copy it should not.
 */
async function wakeupsOf(act: () => Promise<unknown>, ...expected: string[]): Promise<Record<string, number>> {
  const before = await settled();
  await act();
  for (const id of ['FigureEventCounter', ...expected]) {
    await eventually(`${id} woken`, async () => ((await stats()).lambda.byFunction[id] ?? 0) > (before[id] ?? 0));
  }
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const after = (await stats()).lambda.byFunction;
  return Object.fromEntries(
    subscriberIds.flatMap((id) => ((after[id] ?? 0) > (before[id] ?? 0) ? [[id, (after[id] ?? 0) - (before[id] ?? 0)]] : [])),
  );
}

describe('a plain message (no webhook registration, push target, agent, bridge or watcher)', () => {
  it('wakes one subscriber: the figure counter, which counts every message', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, 'hello, plainly'));

    // Assess
    expect(woken).toEqual({ FigureEventCounter: 1 });
  });

  it('has no AI subscribers to wake without AI_BASE_URL: the runtime made no queue for them', async () => {
    // Act
    const { lambda } = await stats();

    // Assess
    expect(lambda.byFunction.AgentMentions).toBeUndefined();
    expect(lambda.byFunction.RoomSummaryScheduler).toBeUndefined();
  });
});

describe('a message that needs more', () => {
  it('with a mention wakes the notification writer, which notifies the mentioned member', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, `hi @${bob.userId}`), 'NotificationWriter');

    // Assess
    expect(woken).toEqual({ FigureEventCounter: 1, NotificationWriter: 1 });
    // The writer is counted as it starts; its notification is written after that.
    const inbox = await eventually('the mention notification', async () => {
      const listed = await call('/notifications', { token: bob.token });
      return JSON.stringify(listed.body).includes('mentioned you') && listed;
    });
    expect(inbox.status).toBe(200);
    expect(JSON.stringify(inbox.body)).toContain('mentioned you');
  });

  it('as a reply wakes the notification writer', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    const parent = await post(bob, roomId, 'a question');
    await new Promise((resolve) => setTimeout(resolve, 2500));

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, 'an answer', { parent_id: parent.id }), 'NotificationWriter');

    // Assess
    expect(woken).toEqual({ FigureEventCounter: 1, NotificationWriter: 1 });
  });

  it('in a room with a push target wakes the push dispatcher', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    const synced = (await stats()).metrics.push_roster_synced ?? 0;
    const subscribed = await call('/push/web/subscribe', {
      token: bob.token,
      body: {
        endpoint: await unreachableUrl(),
        keys: {
          p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
          auth: 'tBHItJI5svbpez7KI4CCXg',
        },
        userAgent: 'vitest',
      },
    });
    expect([200, 201]).toContain(subscribed.status);
    await eventually('the roster synced', async () => ((await stats()).metrics.push_roster_synced ?? 0) > synced);

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, 'for the phone'), 'PushDispatcher');

    // Assess
    expect(woken).toMatchObject({ FigureEventCounter: 1, PushDispatcher: 1 });
    expect(Object.keys(woken).sort()).toEqual(['FigureEventCounter', 'PushDispatcher']);
  });

  it('in a watched room wakes the watcher notifier', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    const watched = await call(`/users/${bob.userId}/watchlist`, { token: bob.token, body: { type: 'room', targetId: roomId } });
    expect([200, 201]).toContain(watched.status);

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, 'for the watcher'), 'WatcherNotifier');

    // Assess
    expect(woken).toEqual({ FigureEventCounter: 1, WatcherNotifier: 1 });
  });

  it('of a project with a webhook registration for message.created wakes the dispatcher, which delivers it', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    const registered = await call('/webhooks/register', {
      apiKey: local.apiKey,
      body: { url: receiver.url, eventTypes: ['message.created'] },
    });
    expect(registered.status).toBe(201);

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, 'for the webhook'), 'WebhookDispatcher');
    await call(`/webhooks/${registered.body.id}`, { apiKey: local.apiKey, method: 'DELETE' });

    // Assess
    expect(woken).toEqual({ FigureEventCounter: 1, WebhookDispatcher: 1 });
    const delivered = await receiver.waitForRequests(1);
    expect(delivered.map((request) => JSON.parse(request.rawBody).payload.content)).toContain('for the webhook');
  });

  it('in a bridged room wakes the bridge relay', async () => {
    // Prepare
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    const bridge = await call('/admin/bridges', {
      apiKey: local.apiKey,
      body: {
        platform: 'slack',
        roomId,
        signingSecret: unique('slack-signing-secret'),
        botToken: `xoxb-${unique('bot')}`,
        channelId: 'C0123ABCD',
      },
    });
    expect(bridge.status).toBe(201);

    // Act
    const woken = await wakeupsOf(() => post(alice, roomId, 'for the bridge'), 'BridgeRelay');

    // Assess (the relay's post to the closed port fails and is retried: at least one wake-up)
    expect(Object.keys(woken).sort()).toEqual(['BridgeRelay', 'FigureEventCounter']);
    expect(woken.FigureEventCounter).toBe(1);
  });
});
