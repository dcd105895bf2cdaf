import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connectUser, type RoomSocket } from '../support/ws';

/**
 * The outbox under an outage, end to end on a runtime of its own: messages are stored while the
 * event fan-out (the SNS stand-in, behind the runtime's switch) is down; once it is back, every
 * event reaches both subscribers of a `message.created`, the webhook receiver and a watcher's user
 * channel, exactly once each.
 */

const OPERATOR_KEY = 'events-outbox-operator-key-0123456';
let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let receiver: WebhookReceiver;
const sockets: RoomSocket[] = [];

const fanOut = async (running: boolean) => {
  const switched = await call('/_local/fan-out', { body: { running } });
  expect(switched.body).toEqual({ running });
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  [local, receiver] = await Promise.all([
    startLocalProcess({
      args: ['--in-memory'],
      env: { CHAT_OPERATOR_KEY: OPERATOR_KEY, CHAT_LOCAL_CONTROLS: 'true', RATE_LIMIT_MESSAGES_PER_MINUTE: '1000' },
    }),
    startWebhookReceiver(),
  ]);
  call = clientOf(local.baseUrl);
}, 60_000);
afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
  await receiver?.close();
  await local?.stop();
});

async function watchedRoomWithWebhook() {
  const created = await call('/platform/projects', { body: { name: 'outbox' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
  const { apiKey } = created.body;
  const token = async (userId: string) => (await call('/auth/token', { apiKey, body: { userId } })).body.token as string;
  const [alice, bob] = [uniqueId('alice'), uniqueId('bob')];
  const [aliceToken, bobToken] = await Promise.all([token(alice), token(bob)]);
  const roomId = uniqueId('room');
  await call('/rooms', { token: aliceToken, body: { id: roomId, type: 'group', members: [bob] } });
  const registered = await call('/webhooks/register', { apiKey, body: { url: receiver.url, eventTypes: ['message.created'] } });
  receiver.secret = registered.body.secret;
  await call(`/users/${bob}/watchlist`, { token: bobToken, body: { type: 'room', targetId: roomId } });
  const bobChannel = await connectUser(bob, bobToken, { wsUrl: local.baseUrl.replace(/^http/, 'ws') });
  sockets.push(bobChannel);
  return { aliceToken, roomId, bobChannel };
}

describe('the event outbox', () => {
  it('delivers every message written while the fan-out was down, once to each subscriber, after it returns', async () => {
    // Prepare
    const { aliceToken, roomId, bobChannel } = await watchedRoomWithWebhook();
    await fanOut(false);

    // Act
    const sent = [];
    for (let index = 0; index < 5; index++) {
      sent.push(await call('/messages', { token: aliceToken, body: { roomId, content: `during the outage ${index}` } }));
    }
    await sleep(1500);
    const duringOutage = { webhooks: receiver.requests.length, frames: bobChannel.ofType('watchlist_event').length };
    await fanOut(true);
    await receiver.waitForRequests(5, 20_000);
    await bobChannel.next(() => bobChannel.ofType('watchlist_event').length >= 5, 20_000);
    // Long enough for a repeat to show: the publisher retries, SQS redelivers.
    await sleep(2000);

    // Assess
    expect(sent.map((response) => response.status)).toEqual([201, 201, 201, 201, 201]);
    expect(duringOutage).toEqual({ webhooks: 0, frames: 0 });
    const sentIds = sent.map((response) => response.body.id).sort();
    const delivered = receiver.requests.map((request) => JSON.parse(request.rawBody).payload.messageId);
    expect(delivered.sort()).toEqual(sentIds);
    expect(receiver.requests.every((request) => request.signatureValid)).toBe(true);
    expect(
      bobChannel
        .ofType('watchlist_event')
        .map((frame) => frame.message.id)
        .sort(),
    ).toEqual(sentIds);
  });
});
