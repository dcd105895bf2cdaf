import { inject } from 'vitest';
import { api, uniqueId } from './api';
import { discordKeyPair } from './bridge-signers';

/** A valid `POST /admin/bridges` body of each platform for `roomId` (secrets made up per call). */
export const bridgeBodies = {
  slack: (roomId: string) => ({
    platform: 'slack',
    roomId,
    signingSecret: uniqueId('slack-signing-secret'),
    botToken: `xoxb-${uniqueId('bot')}`,
    channelId: 'C0123ABCD',
  }),
  discord: (roomId: string) => ({
    platform: 'discord',
    roomId,
    publicKey: discordKeyPair().publicKeyHex,
    webhookUrl: `https://discord.com/api/webhooks/112233445566778899/${uniqueId('hook-token')}`,
  }),
  matrix: (roomId: string) => ({
    platform: 'matrix',
    roomId,
    hsToken: uniqueId('hs-token'),
    asToken: uniqueId('as-token'),
    // The shared runtime's Matrix stand-in: a message in the room is relayed there, not to a real host.
    homeserverUrl: inject('bridgePlatforms').matrix,
    matrixRoomId: '!room:example.org',
  }),
};

/** Creates a bridge with `POST /admin/bridges` and the API key; answers the bridge, or throws naming the refusal. */
export async function createBridge(apiKey: string, body: Record<string, unknown>) {
  const created = await api('/admin/bridges', { apiKey, body });
  if (created.status !== 201) throw new Error(`bridge creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

/** Creates a Slack bridge for `roomId` with the API key; answers the bridge. */
export const createSlackBridge = (apiKey: string, roomId: string) => createBridge(apiKey, bridgeBodies.slack(roomId));
