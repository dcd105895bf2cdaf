import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pusherEventOf } from '#shared/pusher-frames';
import {
  connectionIdOf,
  parseRoomChannel,
  parseSubscriptionId,
  SOCKET_ID_PATTERN,
  socketIdOf,
  socketOf,
  subscriptionId,
} from '#shared/pusher-protocol';

/** The Pusher protocol's pure pieces: socket ids, channel names, subscription ids, frame translation. */

describe('socket ids', () => {
  it('are <digits>.<digits> for API Gateway and local connection ids, and lead back to them', () => {
    const ids = ['L0SM9cOFvHcCIhw=', 'A', ...Array.from({ length: 50 }, () => randomBytes(10).toString('base64'))];
    for (const id of ids) {
      const socketId = socketIdOf(id);
      expect(socketId).toMatch(SOCKET_ID_PATTERN);
      expect(connectionIdOf(socketId)).toBe(id);
    }
  });

  it.each(['1.2.3', 'abc', '', '12', '.12', '0123.456', '1.23456', `${'9'.repeat(65)}.1`])('reads %j as no connection', (socketId) => {
    expect(connectionIdOf(socketId)).toBeUndefined();
  });
});

describe('room channels', () => {
  it.each([
    ['private-room-lobby', { roomId: 'lobby', presence: false, cache: false }],
    ['presence-room-a.b:c@d_e-f', { roomId: 'a.b:c@d_e-f', presence: true, cache: false }],
    ['private-cache-room-r1', { roomId: 'r1', presence: false, cache: true }],
    ['presence-cache-room-r1', { roomId: 'r1', presence: true, cache: true }],
  ])('%s is a room', (name, expected) => {
    expect(parseRoomChannel(name)).toEqual({ name, ...expected });
  });

  it.each([
    'room-lobby',
    'private-room-',
    'private-encrypted-room-x',
    'cache-room-x',
    'private-room-a#b',
    'private-room-a|b',
    `private-room-${'x'.repeat(129)}`,
  ])('%s is no room', (name) => {
    expect(parseRoomChannel(name)).toBeUndefined();
  });
});

describe('subscription ids', () => {
  it('hold the socket and the channel, and a plain connection id is its own socket', () => {
    const id = subscriptionId('L0SM9cOFvHcCIhw=', 'presence-room-r');
    expect(parseSubscriptionId(id)).toEqual({ connectionId: 'L0SM9cOFvHcCIhw=', channel: 'presence-room-r' });
    expect(socketOf(id)).toBe('L0SM9cOFvHcCIhw=');
    expect(socketOf('L0SM9cOFvHcCIhw=')).toBe('L0SM9cOFvHcCIhw=');
    expect(parseSubscriptionId('L0SM9cOFvHcCIhw=')).toBeUndefined();
  });
});

describe('frames for Pusher subscribers', () => {
  const decoded = (text: string | undefined) => {
    const frame = JSON.parse(text as string);
    return { ...frame, data: frame.data === undefined ? undefined : JSON.parse(frame.data) };
  };

  it('carry a new message as the event message', () => {
    const message = { id: 'm1', roomId: 'r', content: 'hi' };
    expect(decoded(pusherEventOf('private-room-r', { type: 'message', message }))).toEqual({
      event: 'message',
      channel: 'private-room-r',
      data: message,
    });
  });

  it('name server and client events by their own names; client events on presence channels carry user_id', () => {
    const frame = { type: 'event', roomId: 'r', event: 'client-typing', data: { on: true }, userId: 'u1' };
    expect(decoded(pusherEventOf('private-room-r', frame))).toEqual({
      event: 'client-typing',
      channel: 'private-room-r',
      data: { on: true },
    });
    expect(decoded(pusherEventOf('presence-room-r', frame))).toEqual({
      event: 'client-typing',
      channel: 'presence-room-r',
      data: { on: true },
      user_id: 'u1',
    });
  });

  it('turn member changes into member_added and member_removed on presence channels only', () => {
    const joined = { type: 'member_joined', roomId: 'r', userId: 'u1', subscriptionCount: 2, userInfo: { name: 'U' } };
    expect(decoded(pusherEventOf('presence-room-r', joined))).toEqual({
      event: 'pusher_internal:member_added',
      channel: 'presence-room-r',
      data: { user_id: 'u1', user_info: { name: 'U' } },
    });
    expect(pusherEventOf('private-room-r', joined)).toBeUndefined();
    expect(decoded(pusherEventOf('presence-room-r', { type: 'member_left', roomId: 'r', userId: 'u1' })).data).toEqual({ user_id: 'u1' });
  });

  it('leave out the native opening and presence frames, and pass any other room frame by its type', () => {
    for (const type of ['connected', 'subscription_succeeded', 'presence', 'history'])
      expect(pusherEventOf('private-room-r', { type, roomId: 'r' })).toBeUndefined();
    expect(pusherEventOf('presence-room-r', { type: 'subscription_count', subscriptionCount: 3 })).toBeUndefined();
    expect(decoded(pusherEventOf('private-room-r', { type: 'subscription_count', roomId: 'r', subscriptionCount: 3 })).data).toEqual({
      subscription_count: 3,
    });
    expect(decoded(pusherEventOf('private-room-r', { type: 'message_updated', roomId: 'r', messageId: 4 }))).toEqual({
      event: 'message_updated',
      channel: 'private-room-r',
      data: { messageId: 4 },
    });
    expect(JSON.parse(pusherEventOf('private-cache-room-r', { type: 'cache_miss', roomId: 'r' }) as string)).toEqual({
      event: 'pusher:cache_miss',
      channel: 'private-cache-room-r',
    });
  });
});
