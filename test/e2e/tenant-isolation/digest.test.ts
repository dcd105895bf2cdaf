import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, expect } from 'vitest';
import { api, runtime, uniqueId } from '../../support/api';
import { describeTenantMatrix, tenantsBeforeAll } from '../../support/matrices/tenant-driver';
import { raw, table } from '../../support/raw-table';
import { eventually } from '../../support/webhook-receiver';

/**
 * Project A against project B on the Digest area's routes, the same user id in both: A's
 * preferences, runs and unsubscribe links never reach B's row or B's subscribers; the matrix is
 * `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();
const B_EMAIL = 'b-subscriber@example.com';

const preferences = async (token: string) => (await api('/digest/preferences', { token })).body;
const deliveries = async (projectId: string, userId: string) => {
  const { Items = [] } = await raw.send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `P#${projectId}#U#${userId}#DIGEST` },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => String(item.sk));
};

/** The shared user is a subscriber with activity in both projects: in A with an e-mail address of A's own. */
beforeAll(async () => {
  const { a, b, aMember, bMember, sharedUserId } = tenants();
  await api('/digest/preferences', { token: bMember, method: 'PATCH', body: { enabled: true, email: B_EMAIL, emailEnabled: true } });
  const aTalker = await a.token('a-talker');
  const roomId = uniqueId('a-digest');
  await api('/rooms', { token: aTalker, body: { id: roomId, type: 'group', members: [sharedUserId] } });
  await api('/messages', { token: aTalker, body: { roomId, content: 'A news' } });
  await api('/digest/preferences', {
    token: aMember,
    method: 'PATCH',
    body: { enabled: true, email: `${a.projectId}@example.com`, emailEnabled: true },
  });
  const bTalker = await b.token('b-talker');
  await api('/rooms', { token: bTalker, body: { id: uniqueId('b-digest'), type: 'group', members: [sharedUserId] } });
});

describeTenantMatrix('Digest', tenants, {
  async GetDigestPreferences({ aUsers }) {
    // Act
    const reads = await Promise.all(aUsers().map(async ({ token }) => preferences(token)));

    // Assess: A's row of the same user id, never B's address
    for (const read of reads) expect(read.email).not.toBe(B_EMAIL);
  },

  async UpdateDigestPreferences({ aMember, bMember }) {
    // Prepare
    const before = await preferences(bMember);

    // Act
    const patched = await api('/digest/preferences', {
      token: aMember,
      method: 'PATCH',
      body: { webPushEnabled: true, inAppEnabled: false },
    });

    // Assess
    expect(patched.status).toBe(200);
    expect(await preferences(bMember)).toEqual(before);
    await api('/digest/preferences', { token: aMember, method: 'PATCH', body: { webPushEnabled: false, inAppEnabled: true } });
  },

  async RunDigest({ a, b, sharedUserId, aCallers }) {
    // Act
    const runs = await Promise.all(
      aCallers().map(({ auth }, index) =>
        api('/admin/digest/run', { ...auth, method: 'POST', body: { digestDate: `2033-01-0${index + 1}`, maxUsers: 10 } }),
      ),
    );
    await eventually('A’s deliveries', async () => (await deliveries(a.projectId, sharedUserId)).length >= 4);

    // Assess
    for (const run of runs) expect(run.status).toBe(202);
    expect(await deliveries(b.projectId, sharedUserId)).toEqual([]);
  },

  async UnsubscribeDigestEmail({ a, b, bMember }) {
    // Prepare: a genuine link of A's, from A's digest e-mail
    await api('/admin/digest/run', { apiKey: a.apiKey, method: 'POST', body: { digestDate: '2033-02-01' } });
    const text = await eventually('A’s e-mail', async () => {
      const { emails } = (await (await fetch(`${runtime().env.AWS_ENDPOINT_URL_SESV2}/store`)).json()) as {
        emails: { destination: { to: string[] }; body: { text: string } }[];
      };
      return emails.find((email) => email.destination.to.includes(`${a.projectId}@example.com`))?.body.text;
    });
    const token = new URL(/Stop these e-mails: (\S+)/.exec(text)?.[1] as string).searchParams.get('token') as string;
    const [version, , user, mac] = token.split('.');
    const before = await preferences(bMember);

    // Act: A's MAC under B's project
    const moved = await api(`/digest/unsubscribe?token=${version}.${Buffer.from(b.projectId).toString('base64url')}.${user}.${mac}`);

    // Assess
    expect(moved).toMatchObject({ status: 403, body: { error: { code: 'invalid_unsubscribe_link' } } });
    expect(await preferences(bMember)).toEqual(before);
    expect(before.emailEnabled).toBe(true);
  },
});
