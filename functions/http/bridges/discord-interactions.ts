import { discordInteraction, receiveDiscordInteraction, verifiedDiscordBridge } from '#domain/bridges/discord-inbound';
import { httpHandler, ok, parseRawJson } from '#edge/http';
import { bridgeParams } from './schemas';

/** Discord's Interactions Endpoint URL: Ed25519 signature first (on the raw bytes), then the interaction. */
export const handler = httpHandler(
  'DiscordBridgeInteractions',
  { params: bridgeParams, rawBody: true },
  async ({ params, headers, rawBody, sourceIp }) => {
    const bridge = await verifiedDiscordBridge(params.bridgeId, headers, rawBody);
    return ok(await receiveDiscordInteraction(bridge, parseRawJson(discordInteraction, rawBody), sourceIp));
  },
);
