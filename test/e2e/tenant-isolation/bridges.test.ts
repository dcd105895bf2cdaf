import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import {
  discordCommandBody,
  discordHeaders,
  discordKeyPair,
  matrixHeaders,
  matrixMessageEvent,
  matrixTransactionBody,
  slackHeaders,
  slackMessageBody,
} from '../../support/bridge-signers';
import { bridgeBodies, createBridge, createSlackBridge } from '../../support/bridges';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the bridges: A's admin and API key neither see, change nor remove
 * B's bridges, cannot link B's rooms to a channel of theirs, and an id of B's bridge is no bridge
 * of A's. On the platform webhooks, what signs for A's bridges (A's Slack signing secret, Discord
 * key, Matrix hs_token) opens none of B's, and a body naming B's channel or room still lands in the
 * room of the bridge it was sent to. The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();
let bBridge: any;
/** A bridge of each platform in each project: A's secrets are the test's (as A's), B's bridges are only attacked. */
const aDiscordKeys = discordKeyPair();
const bDiscordKeys = discordKeyPair();
const webhookBridges = { a: {} as Record<string, any>, b: {} as Record<string, any> };

beforeAll(async () => {
  const { a, b, aRoomId, bRoomId } = tenants();
  bBridge = await createSlackBridge(b.apiKey, bRoomId);
  for (const [side, apiKey, roomId, keys] of [
    ['a', a.apiKey, aRoomId, aDiscordKeys],
    ['b', b.apiKey, bRoomId, bDiscordKeys],
  ] as const) {
    const create = async (body: Record<string, unknown>) => ({ ...body, id: (await createBridge(apiKey, body)).id });
    webhookBridges[side] = {
      slack: await create({ ...bridgeBodies.slack(roomId), channelId: `C0${side.toUpperCase()}CHANNEL` }),
      discord: await create({ ...bridgeBodies.discord(roomId), publicKey: keys.publicKeyHex }),
      matrix: await create({ ...bridgeBodies.matrix(roomId), matrixRoomId: `!${side}-room:example.org` }),
    };
  }
});

const aHistory = async () => (await api(`/rooms/${tenants().aRoomId}/messages`, { apiKey: tenants().a.apiKey })).body.messages as any[];

/** A's signed attempt on B's bridge answers 401 and B's room is as it was; A's own bridge posts into A's room only. */
async function expectOwnBridgeOnly(attempts: {
  onB: () => Promise<{ status: number; body: any }>;
  onA: () => Promise<{ status: number }>;
}) {
  const { bHistory } = tenants();
  const before = await bHistory();
  const onB = await attempts.onB();
  const onA = await attempts.onA();
  expect({ status: onB.status, code: onB.body?.error?.code }).toEqual({ status: 401, code: 'invalid_bridge_signature' });
  expect(onA.status).toBe(200);
  expect(await bHistory()).toEqual(before);
}

const bBridges = async () => (await api('/admin/bridges', { apiKey: tenants().b.apiKey })).body.bridges as any[];

describeTenantMatrix('Bridges', tenants, {
  async CreateBridge({ aCallers, bRooms }) {
    const before = await bBridges();
    for (const { auth } of aCallers()) {
      // B's rooms do not exist for A: no bridge of A's may relay them.
      await expectAllNotFound(
        bRooms().map((roomId) => ({ label: roomId, call: () => api('/admin/bridges', { ...auth, body: bridgeBodies.slack(roomId) }) })),
      );
    }
    expect(await bBridges()).toEqual(before);
  },

  async ListBridges({ a, aCallers }) {
    await createSlackBridge(a.apiKey, tenants().aRoomId);
    for (const { auth } of aCallers()) {
      const listed = await api('/admin/bridges', auth);
      expect(listed.status).toBe(200);
      expect(listed.body.bridges.length).toBeGreaterThan(0);
      expect(listed.body.bridges.every((bridge: any) => bridge.id.startsWith(`br_${a.projectId}_`))).toBe(true);
    }
  },

  async GetBridge({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({ label: who, call: () => api(`/admin/bridges/${bBridge.id}`, auth) })),
      'bridge_not_found',
    );
  },

  async UpdateBridge({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () =>
          api(`/admin/bridges/${bBridge.id}`, { ...auth, method: 'PATCH', body: { channelId: 'CSTOLEN1', botToken: 'xoxb-stolen' } }),
      })),
      'bridge_not_found',
    );
    expect((await bBridges()).find((bridge) => bridge.id === bBridge.id)).toEqual(bBridge);
  },

  async SlackBridgeEvents() {
    const { a, b } = webhookBridges;
    // A's text names B's channel; signed with A's secret it is refused on B's bridge, and A's bridge posts it in A's room.
    const text = slackMessageBody({ teamId: 'T0A', channelId: a.slack.channelId, user: 'U0A', text: `to B ${b.slack.channelId}` });
    await expectOwnBridgeOnly({
      onB: () => api(`/webhooks/bridge/slack/${b.slack.id}`, { headers: slackHeaders(a.slack.signingSecret, text), rawBody: text }),
      onA: () => api(`/webhooks/bridge/slack/${a.slack.id}`, { headers: slackHeaders(a.slack.signingSecret, text), rawBody: text }),
    });
    expect((await aHistory()).some((message) => message.content === `to B ${b.slack.channelId}`)).toBe(true);
  },

  async DiscordBridgeInteractions() {
    const { a, b } = webhookBridges;
    const text = discordCommandBody({ userId: '42', guildId: '7' }, 'from A to B');
    await expectOwnBridgeOnly({
      onB: () => api(`/webhooks/bridge/discord/${b.discord.id}`, { headers: discordHeaders(aDiscordKeys.privateKey, text), rawBody: text }),
      onA: () => api(`/webhooks/bridge/discord/${a.discord.id}`, { headers: discordHeaders(aDiscordKeys.privateKey, text), rawBody: text }),
    });
  },

  async MatrixBridgeTransaction() {
    const { a, b } = webhookBridges;
    // The event names B's Matrix room: on A's bridge it is another room than A's, so it is ignored, never posted to B.
    const text = matrixTransactionBody([
      matrixMessageEvent({ roomId: b.matrix.matrixRoomId, sender: '@mallory:a.example', body: 'into B' }),
    ]);
    await expectOwnBridgeOnly({
      onB: () => api(`/webhooks/matrix/${b.matrix.id}`, { headers: matrixHeaders(a.matrix.hsToken), rawBody: text }),
      onA: () => api(`/webhooks/matrix/${a.matrix.id}`, { headers: matrixHeaders(a.matrix.hsToken), rawBody: text }),
    });
  },

  async MatrixBridgeTransactionPut() {
    const { a, b } = webhookBridges;
    const text = matrixTransactionBody([
      matrixMessageEvent({ roomId: a.matrix.matrixRoomId, sender: '@mallory:a.example', body: 'A only' }),
    ]);
    const path = (bridgeId: string) => `/webhooks/matrix/${bridgeId}/_matrix/app/v1/transactions/txn-tenant`;
    await expectOwnBridgeOnly({
      onB: () => api(path(b.matrix.id), { method: 'PUT', headers: matrixHeaders(a.matrix.hsToken), rawBody: text }),
      onA: () => api(path(a.matrix.id), { method: 'PUT', headers: matrixHeaders(a.matrix.hsToken), rawBody: text }),
    });
  },

  async DeleteBridge({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({ label: who, call: () => api(`/admin/bridges/${bBridge.id}`, { ...auth, method: 'DELETE' }) })),
      'bridge_not_found',
    );
    expect((await bBridges()).map((bridge) => bridge.id)).toContain(bBridge.id);
  },
});
