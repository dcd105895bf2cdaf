import { receiveSlackEvent, slackEnvelope, verifiedSlackBridge } from '#domain/bridges/slack-inbound';
import { httpHandler, ok, parseRawJson } from '#edge/http';
import { bridgeParams } from './schemas';

/** Slack's Events API request URL: signature first (on the raw bytes), then the envelope. */
export const handler = httpHandler(
  'SlackBridgeEvents',
  { params: bridgeParams, rawBody: true },
  async ({ params, headers, rawBody, sourceIp }) => {
    const bridge = await verifiedSlackBridge(params.bridgeId, headers, rawBody);
    return ok(await receiveSlackEvent(bridge, parseRawJson(slackEnvelope, rawBody), sourceIp));
  },
);
