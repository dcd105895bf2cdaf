import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/api';
import {
  discordHeaders,
  discordKeyPair,
  discordPingBody,
  matrixHeaders,
  matrixTransactionBody,
  slackHeaders,
  slackMessageBody,
} from '../../support/bridge-signers';
import { bridgeBodies, createBridge, createSlackBridge } from '../../support/bridges';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  long,
  type RouteRequests,
  set,
  type ValidationProject,
  type Variant,
} from '../../support/matrices/validation-driver';

/**
 * Bad input to the bridge routes; the checks common to every route are the matrix's
 * (`validation-driver.ts`). Beyond the schemas, the domain refuses settings that do not fit the
 * platform (`bridge_settings_invalid`). The platform webhooks verify the raw bytes before they parse
 * them, so their valid requests are signed bytes, and their body checks (below the matrix) sign
 * each bad body as the platform would: unsigned, it would be refused 401 before it was read.
 */

let fixture: ValidationProject;
let bridgeId: string;
/** Bridges for the DeleteBridge requests to delete, one per request. */
const disposableBridgeIds: string[] = [];
/** A bridge of each platform the webhooks are sent to, and what signs for it. */
const discordKeys = discordKeyPair();
const inbound = { slack: { id: '', signingSecret: '' }, discord: { id: '' }, matrix: { id: '', hsToken: '' } };
/** One signed request per webhook, sent as its valid request (a repeated Slack event is idempotent). */
let slackText: string;
let slackSigned: Record<string, string>;
const discordText = discordPingBody();
const matrixText = matrixTransactionBody([]);

beforeAll(async () => {
  fixture = await createValidationProject('validation-bridges');
  bridgeId = (await createSlackBridge(fixture.project.apiKey, fixture.roomId)).id;
  for (let index = 0; index < 8; index++) disposableBridgeIds.push((await createSlackBridge(fixture.project.apiKey, fixture.roomId)).id);
  const slack = bridgeBodies.slack(fixture.roomId);
  const matrix = bridgeBodies.matrix(fixture.roomId);
  const create = async (body: Record<string, unknown>) => (await createBridge(fixture.project.apiKey, body)).id as string;
  inbound.slack = { id: await create(slack), signingSecret: slack.signingSecret };
  inbound.discord = { id: await create({ ...bridgeBodies.discord(fixture.roomId), publicKey: discordKeys.publicKeyHex }) };
  inbound.matrix = { id: await create(matrix), hsToken: matrix.hsToken };
  slackText = slackMessageBody({ teamId: 'T0VALID', channelId: slack.channelId, user: 'U0VALID', text: 'valid' });
  slackSigned = slackHeaders(inbound.slack.signingSecret, slackText);
});

const bytesOf = (text: () => string) => () => ({ bytes: Buffer.from(text()), contentType: 'application/json' });

const admin = () => ({ token: fixture.adminToken });

const requests: RouteRequests = {
  CreateBridge: {
    path: () => '/admin/bridges',
    auth: admin,
    body: () => bridgeBodies.slack(fixture.roomId),
    success: 201,
    roomInBody: true,
  },
  ListBridges: { path: () => '/admin/bridges', auth: admin, success: 200 },
  GetBridge: { path: () => `/admin/bridges/${bridgeId}`, auth: admin, success: 200 },
  UpdateBridge: { path: () => `/admin/bridges/${bridgeId}`, auth: admin, body: () => ({ channelId: 'C0CHANGED' }), success: 200 },
  DeleteBridge: {
    path: () => `/admin/bridges/${disposableBridgeIds.pop() ?? 'br_none-left_000000000000000000000000'}`,
    auth: admin,
    success: 204,
  },
  SlackBridgeEvents: {
    path: () => `/webhooks/bridge/slack/${inbound.slack.id}`,
    auth: () => ({ headers: slackSigned }),
    raw: bytesOf(() => slackText),
    success: 200,
  },
  DiscordBridgeInteractions: {
    path: () => `/webhooks/bridge/discord/${inbound.discord.id}`,
    auth: () => ({ headers: discordHeaders(discordKeys.privateKey, discordText) }),
    raw: bytesOf(() => discordText),
    success: 200,
  },
  MatrixBridgeTransaction: {
    path: () => `/webhooks/matrix/${inbound.matrix.id}`,
    auth: () => ({ headers: matrixHeaders(inbound.matrix.hsToken) }),
    raw: bytesOf(() => matrixText),
    success: 200,
  },
  MatrixBridgeTransactionPut: {
    path: () => `/webhooks/matrix/${inbound.matrix.id}/_matrix/app/v1/transactions/txn-valid`,
    auth: () => ({ headers: matrixHeaders(inbound.matrix.hsToken) }),
    raw: bytesOf(() => matrixText),
    success: 200,
  },
};

/** A webhook's request with `text` as the body, signed for its bridge as the platform signs. */
const signedWebhooks: Record<string, { path: () => string; headers: (text: string) => Record<string, string>; method?: 'PUT' }> = {
  SlackBridgeEvents: {
    path: () => `/webhooks/bridge/slack/${inbound.slack.id}`,
    headers: (text) => slackHeaders(inbound.slack.signingSecret, text),
  },
  DiscordBridgeInteractions: {
    path: () => `/webhooks/bridge/discord/${inbound.discord.id}`,
    headers: (text) => discordHeaders(discordKeys.privateKey, text),
  },
  MatrixBridgeTransaction: { path: () => `/webhooks/matrix/${inbound.matrix.id}`, headers: () => matrixHeaders(inbound.matrix.hsToken) },
  MatrixBridgeTransactionPut: {
    path: () => `/webhooks/matrix/${inbound.matrix.id}/_matrix/app/v1/transactions/txn-bad`,
    headers: () => matrixHeaders(inbound.matrix.hsToken),
    method: 'PUT',
  },
};

const secretVariants = (key: string): Variant[] => [
  [`${key} a number`, set(key, 42), `body.${key}`],
  [`${key} empty`, set(key, ''), `body.${key}`],
  [`${key} of 513 characters`, set(key, long(513)), `body.${key}`],
];

const fieldVariants: Record<string, Variant[]> = {
  CreateBridge: [
    ['platform missing', drop('platform'), 'body.platform'],
    ['platform unknown', set('platform', 'irc'), 'body.platform'],
    ['roomId missing', drop('roomId'), 'body.roomId'],
    ['roomId with #', set('roomId', 'a#b'), 'body.roomId'],
    ['channelId with a space', set('channelId', 'C 1'), 'body.channelId'],
    ['channelId of 65 characters', set('channelId', long(65)), 'body.channelId'],
    ...secretVariants('signingSecret'),
    ...secretVariants('botToken'),
    ['publicKey not hex', set('publicKey', 'z'.repeat(64)), 'body.publicKey'],
    ['publicKey of 63 characters', set('publicKey', 'a'.repeat(63)), 'body.publicKey'],
    ['matrixRoomId without a server', set('matrixRoomId', '!room'), 'body.matrixRoomId'],
    ['homeserverUrl of 2049 characters', set('homeserverUrl', `https://e.org/${long(2035)}`), 'body.homeserverUrl'],
  ],
  UpdateBridge: [
    ['platform (fixed once made)', set('platform', 'slack'), 'body'],
    ['roomId (fixed once made)', set('roomId', 'other-room'), 'body'],
    ...secretVariants('botToken'),
  ],
};

describeValidationMatrix('Bridges', requests, fieldVariants);

describe.each(Object.entries(signedWebhooks).map(([id, webhook]) => ({ id, webhook })))(
  '$id body, signed as its platform signs',
  ({ webhook }) => {
    const sendSigned = (text: string) =>
      api(webhook.path(), { method: webhook.method ?? 'POST', headers: webhook.headers(text), rawBody: text });

    it('answers 400 invalid_json to malformed JSON', async () => {
      // Act
      const response = await sendSigned('{"type": "unterminated');

      // Assess
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'invalid_json' });
    });

    it.each(['null', '[]', '"text"', '42'])('answers 400 validation_failed to the JSON value %s', async (text) => {
      // Act
      const response = await sendSigned(text);

      // Assess
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    });

    it('answers 413 payload_too_large to a body over 1 MiB', async () => {
      // Act
      const response = await sendSigned(JSON.stringify({ type: 1, padding: 'x'.repeat(1024 * 1024) }));

      // Assess
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 413, code: 'payload_too_large' });
    });
  },
);

describe("settings that do not fit the bridge's platform", () => {
  const refusals: [string, () => Record<string, unknown>, string][] = [
    ['a Slack bridge without its signing secret', () => drop('signingSecret')(bridgeBodies.slack(fixture.roomId)), 'body.signingSecret'],
    ['a Slack bridge without a channel', () => drop('channelId')(bridgeBodies.slack(fixture.roomId)), 'body.channelId'],
    ['a Slack bridge with a Matrix field', () => ({ ...bridgeBodies.slack(fixture.roomId), hsToken: 'x' }), 'body.hsToken'],
    ['a Discord bridge with neither webhook nor bot', () => drop('webhookUrl')(bridgeBodies.discord(fixture.roomId)), 'body.webhookUrl'],
    [
      'a Discord bridge whose webhook URL is another host',
      () => ({ ...bridgeBodies.discord(fixture.roomId), webhookUrl: 'https://evil.example.com/api/webhooks/1/token' }),
      'body.webhookUrl',
    ],
    [
      'a Discord bridge with a bot token but no channel',
      () => ({ ...drop('webhookUrl')(bridgeBodies.discord(fixture.roomId)), botToken: 'bot-token' }),
      'body.webhookUrl',
    ],
    ['a Discord bridge without its public key', () => drop('publicKey')(bridgeBodies.discord(fixture.roomId)), 'body.publicKey'],
    ['a Matrix bridge without its hs_token', () => drop('hsToken')(bridgeBodies.matrix(fixture.roomId)), 'body.hsToken'],
  ];

  it.each(refusals.map(([label, body, field]) => ({ label, body, field })))(
    '$label → 400 bridge_settings_invalid naming $field',
    async ({ body, field }) => {
      // Act
      const response = await api('/admin/bridges', { ...admin(), body: body() });

      // Assess
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'bridge_settings_invalid' });
      expect(response.body.error.details).toContainEqual(expect.objectContaining({ field }));
    },
  );

  it('refuses a homeserver URL that is not https (the rules of webhook URLs), naming the field', async () => {
    // Act: plain http to a public host is refused even where loopback is allowed
    const response = await api('/admin/bridges', {
      ...admin(),
      body: { ...bridgeBodies.matrix(fixture.roomId), homeserverUrl: 'http://matrix.example.org' },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.homeserverUrl' }));
  });

  it('refuses a change that leaves the bridge without what its platform needs', async () => {
    // Act: a Slack bridge's channel cannot be changed to a Matrix setting
    const response = await api(`/admin/bridges/${bridgeId}`, {
      ...admin(),
      method: 'PATCH',
      body: { homeserverUrl: 'https://matrix.example.org' },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'bridge_settings_invalid' });
  });
});
