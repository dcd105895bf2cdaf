import { describe, expect, it } from 'vitest';
import { type ApiOptions, api, ISO_TIMESTAMP, uniqueId } from '../support/api';
import { realtimeSuite, settle } from '../support/realtime-suite';
import { connectUser, connectWelcomed } from '../support/ws';

/**
 * The watchlist routes (`GET`, `POST`, `DELETE /users/{userId}/watchlist`) and what a watched user
 * does on the watcher's user channel: `watchlist_event` with `online` for their first connection
 * and `offline` for their last. (Watched rooms need the events consumer: realtime-own-runtime.)
 */

const { project, track, user, room } = realtimeSuite('realtime-watchlist');
type Auth = Pick<ApiOptions, 'token' | 'apiKey'>;

const watchlist = (userId: string, auth: Auth) => api(`/users/${userId}/watchlist`, auth);
const watch = (userId: string, auth: Auth, target: { type: string; targetId: string }) =>
  api(`/users/${userId}/watchlist`, { ...auth, body: target });
const unwatch = (userId: string, auth: Auth, target: { type: string; targetId: string }) =>
  api(`/users/${userId}/watchlist`, { ...auth, method: 'DELETE', body: target });

describe('the watchlist routes', () => {
  it('add a room (201, then 200 with the same target on repeat), list it and remove it (204, also when not watched)', async () => {
    // Prepare
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId]);
    const auth = { token: bob.token };

    // Act
    const added = await watch(bob.userId, auth, { type: 'room', targetId: roomId });
    const again = await watch(bob.userId, auth, { type: 'room', targetId: roomId });
    const listed = await watchlist(bob.userId, auth);
    const removed = await unwatch(bob.userId, auth, { type: 'room', targetId: roomId });
    const removedAgain = await unwatch(bob.userId, auth, { type: 'room', targetId: roomId });
    const after = await watchlist(bob.userId, auth);

    // Assess
    const target = { type: 'room', targetId: roomId, createdAt: expect.stringMatching(ISO_TIMESTAMP) };
    expect({ status: added.status, body: added.body }).toEqual({ status: 201, body: target });
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: added.body });
    expect({ status: listed.status, body: listed.body }).toEqual({ status: 200, body: { targets: [added.body] } });
    expect([removed.status, removedAgain.status]).toEqual([204, 204]);
    expect(after.body).toEqual({ targets: [] });
  });

  it('add users and public rooms the user is not in', async () => {
    // Prepare
    const bob = await user('bob');
    const { roomId } = await room('public');
    const carol = uniqueId('carol');

    // Act
    const byRoom = await watch(bob.userId, { token: bob.token }, { type: 'room', targetId: roomId });
    const byUser = await watch(bob.userId, { token: bob.token }, { type: 'user', targetId: carol });
    const listed = await watchlist(bob.userId, { token: bob.token });

    // Assess
    expect([byRoom.status, byUser.status]).toEqual([201, 201]);
    expect(listed.body.targets.map((t: any) => [t.type, t.targetId]).sort()).toEqual(
      [
        ['room', roomId],
        ['user', carol],
      ].sort(),
    );
  });

  it.each([
    { variant: 'a group room the user is not in', roomId: async () => (await room('group')).roomId, status: [403, 404] },
    { variant: 'a room that does not exist', roomId: async () => uniqueId('missing'), status: [404] },
  ])('refuse $variant and store nothing', async ({ roomId, status }) => {
    // Prepare
    const bob = await user('bob');
    const targetId = await roomId();

    // Act
    const response = await watch(bob.userId, { token: bob.token }, { type: 'room', targetId });

    // Assess
    expect(status).toContain(response.status);
    expect(['not_a_member', 'room_not_found']).toContain(response.body?.error?.code);
    expect((await watchlist(bob.userId, { token: bob.token })).body).toEqual({ targets: [] });
  });

  it.each([
    { caller: 'an admin', auth: async (): Promise<Auth> => ({ token: (await user('admin', ['admin'])).token }) },
    { caller: 'the API key', auth: async (): Promise<Auth> => ({ apiKey: project.apiKey }) },
  ])('refuse $caller adding a group room the user cannot read to their list', async ({ auth }) => {
    // Prepare: the room must be readable by the user whose list it is, whoever asks
    const bob = await user('bob');
    const { roomId } = await room('group');

    // Act
    const response = await watch(bob.userId, await auth(), { type: 'room', targetId: roomId });

    // Assess
    expect([403, 404], `got ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status);
    expect((await watchlist(bob.userId, { token: bob.token })).body).toEqual({ targets: [] });
  });

  it.each([
    { caller: 'an admin', auth: async (): Promise<Auth> => ({ token: (await user('admin', ['admin'])).token }) },
    { caller: 'the API key', auth: async (): Promise<Auth> => ({ apiKey: project.apiKey }) },
  ])("may be used by $caller on someone else's list", async ({ auth }) => {
    // Prepare
    const bob = await user('bob');
    const caller = await auth();
    const target = { type: 'user', targetId: uniqueId('dave') };

    // Act
    const added = await watch(bob.userId, caller, target);
    const listed = await watchlist(bob.userId, caller);
    const removed = await unwatch(bob.userId, caller, target);

    // Assess
    expect([added.status, listed.status, removed.status]).toEqual([201, 200, 204]);
    expect(listed.body.targets).toEqual([added.body]);
  });

  it("refuse a guest (403 forbidden) a target of its own list, so a guest never learns when the project's users come and go", async () => {
    // Prepare
    const guest = await user('guest', ['guest']);
    const bob = await user('bob');
    const { roomId } = await room('public');
    const auth = { token: guest.token };

    // Act
    const byUser = await watch(guest.userId, auth, { type: 'user', targetId: bob.userId });
    const byRoom = await watch(guest.userId, auth, { type: 'room', targetId: roomId });
    const guestChannel = track(await connectUser(guest.userId, guest.token));
    track(await connectUser(bob.userId, bob.token));
    await settle(guestChannel);

    // Assess
    for (const response of [byUser, byRoom])
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await watchlist(guest.userId, auth)).body).toEqual({ targets: [] });
    expect(guestChannel.ofType('watchlist_event')).toEqual([]);
  });

  it('refuse another member (403 forbidden) on every method and leave the list as it was', async () => {
    // Prepare
    const bob = await user('bob');
    const mallory = await user('mallory');
    const target = { type: 'user', targetId: uniqueId('dave') };
    await watch(bob.userId, { token: bob.token }, target);
    const auth = { token: mallory.token };

    // Act
    const responses = [
      await watchlist(bob.userId, auth),
      await watch(bob.userId, auth, { type: 'user', targetId: mallory.userId }),
      await unwatch(bob.userId, auth, target),
    ];

    // Assess
    for (const response of responses)
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await watchlist(bob.userId, { token: bob.token })).body.targets.map((t: any) => t.targetId)).toEqual([target.targetId]);
  });
});

describe('a full watchlist', () => {
  it('refuses the 201st target with 409 watchlist_full, still answers a repeat of a watched one, and takes one again after a removal', async () => {
    // Prepare
    const alice = await user('alice');
    const targets = Array.from({ length: 200 }, (_, index) => ({ type: 'user', targetId: `watched-${index}` }));
    for (let start = 0; start < targets.length; start += 25) {
      const added = await Promise.all(
        targets.slice(start, start + 25).map((target) => watch(alice.userId, { token: alice.token }, target)),
      );
      expect(added.map((response) => response.status)).toEqual(Array(added.length).fill(201));
    }

    // Act
    const overflow = await watch(alice.userId, { token: alice.token }, { type: 'user', targetId: 'one-too-many' });
    const repeat = await watch(alice.userId, { token: alice.token }, targets[0] as { type: string; targetId: string });
    await unwatch(alice.userId, { token: alice.token }, targets[1] as { type: string; targetId: string });
    const afterRemoval = await watch(alice.userId, { token: alice.token }, { type: 'user', targetId: 'one-too-many' });

    // Assess
    expect({ status: overflow.status, code: overflow.body.error.code }).toEqual({ status: 409, code: 'watchlist_full' });
    expect(repeat.status).toBe(200);
    expect(afterRemoval.status).toBe(201);
    expect((await watchlist(alice.userId, { token: alice.token })).body.targets).toHaveLength(200);
  });
});

describe('a watched user', () => {
  it("going online with the first connection and offline with the last shows on the watcher's user channel, once each", async () => {
    // Prepare
    const [alice, bob, carol] = await Promise.all([user('alice'), user('bob'), user('carol')]);
    const { owner, roomId } = await room('group', [bob.userId]);
    expect((await watch(alice.userId, { token: alice.token }, { type: 'user', targetId: bob.userId })).status).toBe(201);
    const aliceChannel = track(await connectUser(alice.userId, alice.token));
    const carolChannel = track(await connectUser(carol.userId, carol.token));
    const ownerRoom = track(await connectWelcomed(roomId, owner.token));

    // Act
    const bobRoom = track(await connectWelcomed(roomId, bob.token));
    const online = await aliceChannel.next((frame) => frame.type === 'watchlist_event');
    const bobChannel = track(await connectUser(bob.userId, bob.token));
    await bobRoom.close();
    await ownerRoom.next((frame) => frame.type === 'member_left');
    await settle(aliceChannel);
    const eventsWhileStillOnline = aliceChannel.ofType('watchlist_event').length;
    await bobChannel.close();
    const offline = await aliceChannel.next((frame) => frame.type === 'watchlist_event' && frame.activity === 'offline');
    await settle(carolChannel);

    // Assess
    const at = expect.stringMatching(ISO_TIMESTAMP);
    expect(online).toEqual({
      type: 'watchlist_event',
      target: { type: 'user', targetId: bob.userId },
      activity: 'online',
      userId: bob.userId,
      at,
    });
    expect(offline).toEqual({
      type: 'watchlist_event',
      target: { type: 'user', targetId: bob.userId },
      activity: 'offline',
      userId: bob.userId,
      at,
    });
    expect(eventsWhileStillOnline).toBe(1);
    expect(aliceChannel.ofType('watchlist_event')).toEqual([online, offline]);
    expect(carolChannel.ofType('watchlist_event')).toEqual([]);
  });

  it('is no longer reported to a watcher who unwatched', async () => {
    // Prepare
    const [alice, bob, carol] = await Promise.all([user('alice'), user('bob'), user('carol')]);
    const target = { type: 'user', targetId: bob.userId };
    await watch(alice.userId, { token: alice.token }, target);
    await watch(carol.userId, { token: carol.token }, target);
    await unwatch(alice.userId, { token: alice.token }, target);
    const aliceChannel = track(await connectUser(alice.userId, alice.token));
    const carolChannel = track(await connectUser(carol.userId, carol.token));

    // Act
    const bobChannel = track(await connectUser(bob.userId, bob.token));
    await bobChannel.close();
    await carolChannel.next((frame) => frame.type === 'watchlist_event' && frame.activity === 'offline');
    await settle(aliceChannel);

    // Assess
    expect(carolChannel.ofType('watchlist_event').map((frame) => frame.activity)).toEqual(['online', 'offline']);
    expect(aliceChannel.ofType('watchlist_event')).toEqual([]);
  });
});
