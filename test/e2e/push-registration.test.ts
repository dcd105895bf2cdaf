import { beforeAll, describe, expect, it } from 'vitest';
import { targetsVersionKey } from '#shared/db/push';
import { rosterKey } from '#shared/db/push-roster';
import { api, createTestProject, newUser, type TestProject, uniqueId } from '../support/api';
import { fcmToken, newSubscription, subscriptionKeys } from '../support/push/fixtures';
import { get } from '../support/raw-table';

/**
 * Registering push targets again, as apps and browsers do on every start: what the table holds
 * afterwards (the user's targets version and the roster copies in each of the user's rooms), read
 * with a client of the test's own on the shared runtime.
 */

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('push-registration');
});

/** A user in three rooms, with what their push state looks like in the table. */
async function userInRooms() {
  const user = await newUser(project, 'pushed');
  const roomIds = [uniqueId('room'), uniqueId('room'), uniqueId('room')];
  for (const id of roomIds) await api('/rooms', { apiKey: project.apiKey, body: { id, type: 'group', members: [user.userId] } });
  const state = async () => ({
    version: (await get(...keyOf(targetsVersionKey(project.projectId, user.userId))))?.v,
    rosters: await Promise.all(roomIds.map(async (roomId) => get(...keyOf(rosterKey(project.projectId, roomId, user.userId))))),
  });
  return { user, state };
}
const keyOf = (key: { pk: string; sk: string }) => [key.pk, key.sk] as const;

describe('registering a push target again', () => {
  it('with nothing changed answers 200 and leaves the targets version and every roster copy as they were', async () => {
    // Prepare
    const { user, state } = await userInRooms();
    const device = { platform: 'fcm', token: fcmToken() };
    const subscription = { ...newSubscription(), userAgent: 'Firefox' };
    expect((await api('/push/devices', { token: user.token, body: device })).status).toBe(201);
    expect((await api('/push/web/subscribe', { token: user.token, body: subscription })).status).toBe(201);
    const before = await state();

    // Act
    const deviceAgain = await api('/push/devices', { token: user.token, body: device });
    const subscriptionAgain = await api('/push/web/subscribe', { token: user.token, body: { ...subscription, userAgent: 'Firefox 2' } });

    // Assess
    expect(deviceAgain.status).toBe(200);
    expect(subscriptionAgain).toMatchObject({ status: 200, body: { userAgent: 'Firefox 2' } });
    expect(before.rosters.map((copy) => copy?.targets.length)).toEqual([2, 2, 2]);
    expect(await state()).toEqual(before);
    const listed = await api('/push/web/subscriptions', { token: user.token });
    expect(listed.body.subscriptions).toMatchObject([{ userAgent: 'Firefox 2' }]);
  });

  it('with new keys or another platform moves the version on and re-writes every roster copy', async () => {
    // Prepare
    const { user, state } = await userInRooms();
    const device = { platform: 'fcm', token: fcmToken() };
    const subscription = newSubscription();
    await api('/push/devices', { token: user.token, body: device });
    await api('/push/web/subscribe', { token: user.token, body: subscription });
    const before = await state();

    // Act
    const keys = subscriptionKeys();
    const rekeyed = await api('/push/web/subscribe', { token: user.token, body: { ...subscription, keys } });
    const replatformed = await api('/push/devices', { token: user.token, body: { ...device, platform: 'android' } });

    // Assess
    expect([rekeyed.status, replatformed.status]).toEqual([200, 200]);
    const after = await state();
    expect(after.version).toBe(Number(before.version) + 2);
    for (const copy of after.rosters) {
      expect(copy?.v).toBe(after.version);
      expect(copy?.targets).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'web', p256dh: keys.p256dh, auth: keys.auth }),
          expect.objectContaining({ kind: 'device', platform: 'android', token: device.token }),
        ]),
      );
    }
  });
});
