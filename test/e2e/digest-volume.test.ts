import { beforeAll, describe, expect, it } from 'vitest';
import { putAll } from '#shared/db/batch';
import { digestPreferenceItemFor } from '#shared/db/digest-preference';
import { membershipItemFor } from '#shared/db/membership';
import { api, createTestProject, newUser, type TestProject, uniqueId } from '../support/api';
import { eventually } from '../support/webhook-receiver';

/**
 * 5,000 subscribers of one project, seeded with batch writes, through one admin run: the run pages
 * through them and fans them out in queued jobs of `DIGEST_USERS_PER_JOB` (25), each delivered by
 * one worker invocation, by e-mail to every one of them (the channel that costs the table nothing
 * beyond the claim: the test is about the fan-out; in-app and web push at volume are the bench's,
 * `bench/digest.ts`).
 */

const USERS = 5000;
const PER_JOB = 25;

let project: TestProject;
let roomId: string;

const stats = async () => (await api('/_local/stats')).body as { metrics: Record<string, number> };
const metric = async (name: string) => (await stats()).metrics[name] ?? 0;

/** Items written eight requests at a time: the seed is the test's setup, not what it measures. */
async function seed(items: readonly Record<string, unknown>[]): Promise<void> {
  const lanes = 8;
  const size = Math.ceil(items.length / lanes);
  await Promise.all(Array.from({ length: lanes }, (_, lane) => putAll(items.slice(lane * size, (lane + 1) * size))));
}

beforeAll(async () => {
  project = await createTestProject('digest-volume');
  const talker = await newUser(project, 'talker');
  roomId = uniqueId('room');
  await api('/rooms', { token: talker.token, body: { id: roomId, type: 'group', name: 'All hands' } });
  for (const content of ['Quarterly numbers are in', 'Offsite moved to June']) {
    await api('/messages', { token: talker.token, body: { roomId, content } });
  }
  const userIds = Array.from({ length: USERS }, (_, index) => `subscriber-${String(index).padStart(4, '0')}`);
  const joinedAt = new Date().toISOString();
  await seed([
    ...userIds.map((userId) => membershipItemFor(project.projectId, roomId, userId, 'member', joinedAt)),
    ...userIds.map((userId) =>
      digestPreferenceItemFor(project.projectId, userId, {
        enabled: true,
        email: `${userId}@volume.example.com`,
        inAppEnabled: false,
        webPushEnabled: false,
        emailEnabled: true,
        updatedAt: joinedAt,
      }),
    ),
  ]);
}, 120_000);

describe('a digest run of 5,000 users', () => {
  it('goes through queued jobs of 25 users and delivers to each once', async () => {
    // Arrange
    const [inAppBefore, emailBefore, jobsBefore] = await Promise.all([
      metric('digest_in_app'),
      metric('digest_email'),
      metric('digest_user_jobs'),
    ]);

    const started = Date.now();

    // Act
    const run = await api('/admin/digest/run', {
      apiKey: project.apiKey,
      method: 'POST',
      body: { digestDate: '2032-01-01', maxUsers: USERS },
    });
    await eventually('5,000 e-mails', async () => (await metric('digest_email')) - emailBefore >= USERS, 240_000, 250);
    const seconds = (Date.now() - started) / 1000;

    // Assess
    expect(run.status).toBe(202);
    expect((await metric('digest_email')) - emailBefore).toBe(USERS);
    expect((await metric('digest_user_jobs')) - jobsBefore).toBe(USERS / PER_JOB);
    expect((await metric('digest_in_app')) - inAppBefore).toBe(0);
    console.log(`digest of ${USERS} users in ${seconds.toFixed(1)} s (${Math.round(USERS / seconds)} users/s)`);
  }, 300_000);
});
