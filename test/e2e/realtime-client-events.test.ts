import { describe, expect, it } from 'vitest';
import { api, createTestProject, newUser, type TestProject, uniqueId } from '../support/api';
import { collectEvents, eventsOf } from '../support/events';
import { realtimeSuite, settle } from '../support/realtime-suite';
import { eventually } from '../support/webhook-receiver';

/**
 * `client-*` frames: broadcast as `event` frames to the room's other connections (the sender's
 * other connections included) and never back to the sending socket; rate limited per connection
 * (`RATE_LIMIT_CLIENT_EVENTS_PER_SECOND`, 10 by default) with `rate_limited` error frames that
 * leave the connection open; offered to `client_event` webhooks.
 */

const { project, join } = realtimeSuite('realtime-client-events');

/** A group room of alice and bob: alice on two connections, bob on one, all welcomed and announced. */
async function roomOfThree(projectOf: TestProject = project) {
  const [alice, bob] = await Promise.all([newUser(projectOf, 'alice'), newUser(projectOf, 'bob')]);
  const roomId = uniqueId('room');
  await api('/rooms', { token: alice.token, body: { id: roomId, type: 'group', members: [bob.userId] } });
  const sender = await join(roomId, alice.token);
  const sibling = await join(roomId, alice.token);
  const receiver = await join(roomId, bob.token);
  // The last arrival is announced to the others before anything else happens.
  await sender.next((frame) => frame.type === 'subscription_count' && frame.subscriptionCount === 3);
  await sibling.next((frame) => frame.type === 'subscription_count' && frame.subscriptionCount === 3);
  return { roomId, alice, bob, sender, sibling, receiver };
}

/** Sleeps until just past the start of a rate-limit second, so a burst lands in one window. */
async function startOfSecond() {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
}

describe('client events', () => {
  it("reach the room's other connections, the sender's own other connection included, but not the sending socket", async () => {
    // Prepare
    const { roomId, alice, sender, sibling, receiver } = await roomOfThree();
    const socketId = await sender.socketId();

    // Act
    sender.send({ type: 'client-typing', data: { typing: true } });
    const toBob = await receiver.next((frame) => frame.type === 'event');
    const toSibling = await sibling.next((frame) => frame.type === 'event');
    await settle(sender);

    // Assess
    const expected = { type: 'event', roomId, event: 'client-typing', data: { typing: true }, userId: alice.userId, socketId };
    expect(toBob).toEqual(expected);
    expect(toSibling).toEqual(expected);
    expect(sender.ofType('event', 'error')).toEqual([]);
  });

  it('carry {} as data when the frame has none', async () => {
    // Prepare
    const { receiver, sender } = await roomOfThree();

    // Act
    sender.send({ type: 'client-ping.v2:x_y' });
    const delivered = await receiver.next((frame) => frame.type === 'event');

    // Assess
    expect(delivered).toMatchObject({ event: 'client-ping.v2:x_y', data: {} });
  });

  it('over 10 KB are refused with payload_too_large and reach nobody', async () => {
    // Prepare
    const { receiver, sender } = await roomOfThree();

    // Act
    sender.send({ type: 'client-big', data: { blob: 'x'.repeat(10 * 1024) }, ref: 'r-1' });
    const error = await sender.next((frame) => frame.type === 'error');
    await settle(receiver);

    // Assess
    expect(error).toMatchObject({ type: 'error', ref: 'r-1', error: { code: 'payload_too_large' } });
    expect(receiver.ofType('event')).toEqual([]);
  });

  it('with an empty key in their data, at any depth, are refused with validation_failed and reach nobody', async () => {
    // Prepare: a client_event subscriber, so the event is published (stored) as well as relayed.
    const own = await createTestProject('realtime-client-event-empty-key');
    await api('/webhooks/register', {
      apiKey: own.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['client_event'] },
    });
    const { receiver, sender } = await roomOfThree(own);

    // Act
    sender.send({ type: 'client-odd', data: { fine: 1, nested: { '': 'empty' } }, ref: 'r-empty' });
    const error = await sender.next((frame) => frame.type === 'error');
    await settle(receiver);

    // Assess
    expect(error).toMatchObject({
      type: 'error',
      ref: 'r-empty',
      error: { code: 'validation_failed', details: [{ field: 'data', message: 'must not have an empty key, at any depth' }] },
    });
    expect(receiver.ofType('event')).toEqual([]);
    expect(await collectEvents(eventsOf(own.projectId), { count: 1, timeoutMs: 2000 })).toEqual([]);
  });

  it('past 10 a second on one connection get rate_limited error frames with retryAfter; the connection stays usable', async () => {
    // Prepare
    const { sender, receiver } = await roomOfThree();
    await startOfSecond();
    const startedAt = Date.now();

    // Act
    for (let i = 0; i < 15; i++) sender.send({ type: 'client-burst', data: { i }, ref: `b-${i}` });
    await eventually('every frame refused or delivered', async () => sender.ofType('error').length + receiver.ofType('event').length >= 15);
    await settle(receiver);
    await settle(sender);
    // Each second has its own budget: a machine too loaded to take the 15 within one splits them over two.
    const seconds = Math.floor(Date.now() / 1000) - Math.floor(startedAt / 1000) + 1;

    // Assess
    const errors = sender.ofType('error');
    expect(errors.length + receiver.ofType('event').length).toBe(15);
    expect(errors.length).toBeGreaterThanOrEqual(Math.max(0, 15 - 10 * seconds));
    if (seconds === 1) expect(errors).toHaveLength(5);
    for (const error of errors) {
      expect(error).toMatchObject({ type: 'error', event: 'client-burst', error: { code: 'rate_limited' } });
      expect(error.retryAfter).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(error.retryAfter)).toBe(true);
    }
    const refused = new Set(errors.map((error) => error.ref));
    const delivered = receiver.ofType('event').map((frame) => `b-${frame.data.i}`);
    expect(delivered.length).toBeLessThanOrEqual(10 * seconds);
    expect(delivered.filter((ref) => refused.has(ref))).toEqual([]);
    expect(sender.isOpen).toBe(true);
    sender.send({ type: 'message', content: 'still talking' });
    expect(await sender.next((frame) => frame.type === 'ack')).toMatchObject({ created: true, message: { content: 'still talking' } });
  });

  it('are limited per connection: a second connection of the same user has its own budget', async () => {
    // Prepare
    const { sender, sibling, receiver } = await roomOfThree();
    await startOfSecond();

    // Act
    for (let i = 0; i < 10; i++) sender.send({ type: 'client-a', data: { i } });
    for (let i = 0; i < 10; i++) sibling.send({ type: 'client-b', data: { i } });
    await receiver.next(() => receiver.ofType('event').length >= 20);
    await settle(sender);
    await settle(sibling);

    // Assess
    expect(sender.ofType('error')).toEqual([]);
    expect(sibling.ofType('error')).toEqual([]);
  });

  it('are published as client_event when a webhook subscribes', async () => {
    // Prepare
    const own = await createTestProject('realtime-client-event-hook');
    await api('/webhooks/register', {
      apiKey: own.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['client_event'] },
    });
    const { roomId, sender, receiver } = await roomOfThree(own);

    // Act
    sender.send({ type: 'client-cursor', data: { x: 3, y: 4 } });
    await receiver.next((frame) => frame.type === 'event');
    const events = await collectEvents(eventsOf(own.projectId), { count: 1, settleMs: 500 });

    // Assess
    expect(events).toEqual([
      expect.objectContaining({
        type: 'client_event',
        projectId: own.projectId,
        payload: { roomId, event: 'client-cursor', data: { x: 3, y: 4 } },
      }),
    ]);
  });
});
