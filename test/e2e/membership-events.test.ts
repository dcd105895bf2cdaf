import { afterAll, describe, expect, it } from 'vitest';
import { api, createTestProject, ISO_TIMESTAMP, newUser, uniqueId } from '../support/api';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connect, type RoomSocket } from '../support/ws';

/**
 * Membership changes announce themselves: `room.member_joined` on every path into a room (the
 * room's creation, `POST /rooms/{roomId}/members`, a project member reaching a public room through
 * its history, a socket or a message) and `room.member_left` on a removal, each with its pinned
 * payload, as a webhook of the project receives them on the shared runtime.
 */

const receivers: WebhookReceiver[] = [];
const sockets: RoomSocket[] = [];
afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

const at = expect.stringMatching(ISO_TIMESTAMP);

describe('room.member_joined and room.member_left', () => {
  it('reach a webhook on every join path and on removals, with the pinned payloads, and not for a repeated add or a role change', async () => {
    // Prepare
    const project = await createTestProject('membership-events');
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const registered = await api('/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: receiver.url, eventTypes: ['room.member_joined', 'room.member_left'] },
    });
    expect(registered.status).toBe(201);
    const [alice, bob, carol, dave, erin, frank, gina] = await Promise.all(
      ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina'].map((name) => newUser(project, name)),
    );
    const groupId = uniqueId('group');
    const publicId = uniqueId('public');

    // Act
    const calls = [
      await api('/rooms', { token: alice?.token, body: { id: groupId, type: 'group', members: [bob?.userId] } }),
      await api('/rooms', { apiKey: project.apiKey, body: { id: publicId, type: 'public' } }),
      await api(`/rooms/${groupId}/members`, { token: alice?.token, body: { userId: carol?.userId, role: 'guest' } }),
      await api(`/rooms/${groupId}/members`, { token: alice?.token, body: { userId: carol?.userId, role: 'guest' } }),
      await api(`/rooms/${groupId}/members`, { apiKey: project.apiKey, body: { userId: carol?.userId, role: 'member' } }),
      await api(`/rooms/${publicId}/messages`, { token: dave?.token }),
      await api('/messages', { token: frank?.token, body: { roomId: publicId, content: 'hello, I am new here' } }),
      await api('/rooms', { token: alice?.token, body: { type: 'dm', members: [gina?.userId] } }),
    ];
    sockets.push(await connect(publicId, erin?.token as string));
    const dmId = calls[7]?.body.id as string;
    const removals = [
      await api(`/rooms/${groupId}/members/${bob?.userId}`, { method: 'DELETE', token: alice?.token }),
      await api(`/rooms/${publicId}/members/${dave?.userId}`, { method: 'DELETE', token: dave?.token }),
      await api(`/rooms/${publicId}/members/${uniqueId('never-joined')}`, { method: 'DELETE', apiKey: project.apiKey }),
    ];
    const expected = [
      {
        type: 'room.member_joined',
        payload: { roomId: groupId, userId: alice?.userId, role: 'owner', via: 'create', addedBy: alice?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: groupId, userId: bob?.userId, role: 'member', via: 'create', addedBy: alice?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: groupId, userId: carol?.userId, role: 'guest', via: 'add', addedBy: alice?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: publicId, userId: dave?.userId, role: 'member', via: 'join', addedBy: dave?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: publicId, userId: frank?.userId, role: 'member', via: 'join', addedBy: frank?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: dmId, userId: alice?.userId, role: 'member', via: 'create', addedBy: alice?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: dmId, userId: gina?.userId, role: 'member', via: 'create', addedBy: alice?.userId },
      },
      {
        type: 'room.member_joined',
        payload: { roomId: publicId, userId: erin?.userId, role: 'member', via: 'join', addedBy: erin?.userId },
      },
      { type: 'room.member_left', payload: { roomId: groupId, userId: bob?.userId, role: 'member', removedBy: alice?.userId } },
      { type: 'room.member_left', payload: { roomId: publicId, userId: dave?.userId, role: 'member', removedBy: dave?.userId } },
    ];
    await receiver.waitForRequests(expected.length, 20_000);
    // Long enough for an event announced twice, or for a path that should announce nothing, to show.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    // Assess
    expect(calls.map((answer) => answer.status)).toEqual([201, 201, 201, 200, 200, 200, 201, 201]);
    expect(removals.map((answer) => answer.status)).toEqual([204, 204, 204]);
    const members = await api(`/rooms/${groupId}/members`, { apiKey: project.apiKey });
    const joinedAt = Object.fromEntries(
      (members.body.members as { userId: string; joinedAt: string }[]).map((m) => [m.userId, m.joinedAt]),
    );
    const received = receiver.requests.map((request) => JSON.parse(request.rawBody) as { type: string; projectId: string; payload: any });
    const key = (event: { type: string; payload: { roomId: string; userId: string } }) =>
      `${event.type} ${event.payload.roomId} ${event.payload.userId}`;
    const byKey = (a: { type: string; payload: any }, b: { type: string; payload: any }) => key(a).localeCompare(key(b));
    expect([...received].sort(byKey)).toEqual(
      [...expected]
        .map(({ type, payload }) => ({
          type,
          projectId: project.projectId,
          createdAt: at,
          payload: type === 'room.member_joined' ? { ...payload, joinedAt: at } : { ...payload, leftAt: at },
        }))
        .sort(byKey),
    );
    // The event carries the membership's own join time.
    const carolJoined = received.find((event) => event.type === 'room.member_joined' && event.payload.userId === carol?.userId);
    expect(carolJoined?.payload.joinedAt).toBe(joinedAt[carol?.userId as string]);
  });
});
