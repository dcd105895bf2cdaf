import { randomBytes } from 'node:crypto';
import { GetSubscriptionAttributesCommand, ListSubscriptionsByTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSubscribers } from '#wiring';
import { api, createTestProject, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import type { RecordedPost } from '../support/bridge-platforms';
import { sharedBridgePlatforms } from '../support/bridge-platforms/shared';
import { discordCommandBody, discordHeaders, discordKeyPair, slackHeaders, slackMessageBody } from '../support/bridge-signers';
import { createBridge } from '../support/bridges';

/**
 * The outbound relay against the shared runtime: messages of a bridged room reach the local Slack,
 * Discord and Matrix stand-ins (`test/support/bridge-platforms/`) with each platform's auth and
 * shape; a message that came in through a bridge's webhook is not sent back to it; a failing platform is
 * retried and ends in the relay's dead-letter queue while the room's other bridges got the message
 * once; a room without a bridge never reaches the relay's queue; a deleted bridge gets nothing.
 */

const platforms = sharedBridgePlatforms();
const relay = eventSubscribers.find((subscriber) => subscriber.id === 'BridgeRelay');
if (!relay) throw new Error('no BridgeRelay subscriber in the wiring table');

let project: TestProject;
let author: { userId: string; token: string };

beforeAll(async () => {
  project = await createTestProject('bridges-relay');
  author = await newUser(project, 'author');
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const digits = (count: number) => `1${Array.from({ length: count - 1 }, () => Math.floor(Math.random() * 10)).join('')}`;

async function newRoom(): Promise<string> {
  const roomId = uniqueId('room');
  const created = await api('/rooms', { token: author.token, body: { id: roomId, type: 'group' } });
  expect(created.status).toBe(201);
  return roomId;
}

/** A bridge of the suite's project, by its id. */
const bridgeIdOf = async (body: Record<string, unknown>): Promise<string> => (await createBridge(project.apiKey, body)).id;

async function slackBridge(roomId: string) {
  const channel = `C${hex(5).toUpperCase()}`;
  const botToken = `xoxb-${hex(8)}`;
  await platforms.slack.expect(channel, botToken);
  const signingSecret = hex(16);
  const bridgeId = await bridgeIdOf({ platform: 'slack', roomId, signingSecret, botToken, channelId: channel });
  return { bridgeId, target: channel, botToken, signingSecret };
}

async function discordWebhookBridge(roomId: string) {
  const webhookId = digits(18);
  const webhookToken = hex(20);
  const keys = discordKeyPair();
  await platforms.discord.expect(webhookId, webhookToken);
  const webhookUrl = `https://discord.com/api/webhooks/${webhookId}/${webhookToken}`;
  const bridgeId = await bridgeIdOf({ platform: 'discord', roomId, publicKey: keys.publicKeyHex, webhookUrl });
  return { bridgeId, target: webhookId, webhookToken, keys };
}

async function discordBotBridge(roomId: string) {
  const channelId = digits(18);
  const botToken = hex(24);
  await platforms.discord.expect(channelId, botToken);
  const bridgeId = await bridgeIdOf({ platform: 'discord', roomId, publicKey: discordKeyPair().publicKeyHex, botToken, channelId });
  return { bridgeId, target: channelId, botToken };
}

async function matrixBridge(roomId: string) {
  const matrixRoomId = `!${hex(8)}:example.org`;
  const asToken = hex(16);
  await platforms.matrix.expect(matrixRoomId, asToken);
  const bridgeId = await bridgeIdOf({
    platform: 'matrix',
    roomId,
    hsToken: hex(16),
    asToken,
    homeserverUrl: platforms.matrix.url,
    matrixRoomId,
  });
  return { bridgeId, target: matrixRoomId, asToken };
}

async function post(roomId: string, content: string, attachments?: string[]) {
  const sent = await api('/messages', { token: author.token, body: { roomId, content, ...(attachments ? { attachments } : {}) } });
  expect(sent.status).toBe(201);
  return sent.body as { id: number; content: string };
}

/** Every request for `target`, stored or not (a test that counts attempts). */
const everyRequest = (_post: RecordedPost) => true;

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const sqs = () =>
  new SQSClient({ endpoint: runtime().env.AWS_ENDPOINT_URL_SQS, region: 'us-east-1', credentials, useQueueUrlAsEndpoint: false });
const sns = () => new SNSClient({ endpoint: runtime().env.AWS_ENDPOINT_URL_SQS, region: 'us-east-1', credentials });

describe('a message posted in a bridged room', () => {
  it('reaches Slack, Discord (webhook and bot) and Matrix with each platform’s auth, the author, and no pings', async () => {
    // Prepare
    const roomId = await newRoom();
    const slack = await slackBridge(roomId);
    const webhook = await discordWebhookBridge(roomId);
    const bot = await discordBotBridge(roomId);
    const matrix = await matrixBridge(roomId);
    const content = 'hello @everyone <!channel> & <@U123>';
    const file = 'https://files.example.test/report.pdf?a=1&b=2';

    // Act
    const message = await post(roomId, content, [file]);

    // Assess
    const [slackPosts, webhookPosts, botPosts, matrixPosts] = await Promise.all([
      platforms.slack.waitForPosts(slack.target, 1, { settleMs: 300 }),
      platforms.discord.waitForPosts(webhook.target, 1, { settleMs: 300 }),
      platforms.discord.waitForPosts(bot.target, 1, { settleMs: 300 }),
      platforms.matrix.waitForPosts(matrix.target, 1, { settleMs: 300 }),
    ]);
    expect(slackPosts).toHaveLength(1);
    expect(slackPosts[0]).toMatchObject({ method: 'POST', path: '/api/chat.postMessage', authorization: `Bearer ${slack.botToken}` });
    expect(slackPosts[0]?.body).toMatchObject({
      channel: slack.target,
      // Slack's markup characters escaped: `<!channel>` and `<@U123>` stay text and ping nobody.
      text: `*${author.userId}*: hello @everyone &lt;!channel&gt; &amp; &lt;@U123&gt;\n${file.replace('&', '&amp;')}`,
    });

    expect(webhookPosts).toHaveLength(1);
    expect(webhookPosts[0]).toMatchObject({
      method: 'POST',
      path: `/api/v10/webhooks/${webhook.target}/${webhook.webhookToken}?wait=true`,
    });
    expect(webhookPosts[0]?.body).toEqual({ content: `${content}\n${file}`, username: author.userId, allowed_mentions: { parse: [] } });

    expect(botPosts).toHaveLength(1);
    expect(botPosts[0]).toMatchObject({
      method: 'POST',
      path: `/api/v10/channels/${bot.target}/messages`,
      authorization: `Bot ${bot.botToken}`,
    });
    expect(botPosts[0]?.body).toEqual({ content: `**${author.userId}**: ${content}\n${file}`, allowed_mentions: { parse: [] } });

    expect(matrixPosts).toHaveLength(1);
    expect(matrixPosts[0]).toMatchObject({ method: 'PUT', authorization: `Bearer ${matrix.asToken}` });
    expect(matrixPosts[0]?.path).toMatch(
      new RegExp(
        `^/_matrix/client/v3/rooms/${encodeURIComponent(matrix.target).replace(/[.$]/g, '\\$&')}/send/m\\.room\\.message/sc[0-9a-f]{40}$`,
      ),
    );
    expect(matrixPosts[0]?.body).toEqual({
      msgtype: 'm.text',
      body: `${author.userId}: ${content}\n${file}`,
      'io.serverless-chat.origin': { roomId, messageId: message.id },
    });
  });

  it('shows a Discord user relayed to another Discord channel under a name Discord accepts', async () => {
    // Prepare: Discord refuses webhook usernames containing "discord", which bridged Discord users' ids do.
    const roomId = await newRoom();
    const origin = await discordWebhookBridge(roomId);
    const other = await discordWebhookBridge(roomId);

    // Act: a `/chat` command on the origin bridge's interactions endpoint
    const text = discordCommandBody({ userId: '80351110224678912', guildId: '81384788765712384' }, 'from a Discord user');
    const answer = await api(`/webhooks/bridge/discord/${origin.bridgeId}`, {
      headers: discordHeaders(origin.keys.privateKey, text),
      rawBody: text,
    });
    expect(answer.status).toBe(200);

    // Assess
    const posts = await platforms.discord.waitForPosts(other.target, 1, { which: everyRequest });
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({ status: 200, accepted: true, body: { username: 'dc:81384788765712384:80351110224678912' } });
  });
});

describe('a message that came in through a bridge', () => {
  it('goes to the room’s other bridges and never back to its own', async () => {
    // Prepare
    const roomId = await newRoom();
    const slack = await slackBridge(roomId);
    const webhook = await discordWebhookBridge(roomId);
    const matrix = await matrixBridge(roomId);
    const platformUser = `slack:T${hex(4)}:U${hex(4)}`;

    const [team, user] = platformUser.split(':').slice(1) as [string, string];

    // Act: Slack's Events API delivers a channel message to the bridge's webhook
    const text = slackMessageBody({ teamId: team, channelId: slack.target, user, text: 'typed in Slack' });
    const answer = await api(`/webhooks/bridge/slack/${slack.bridgeId}`, {
      headers: slackHeaders(slack.signingSecret, text),
      rawBody: text,
    });
    const [message] = (await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey })).body.messages as { id: number }[];

    // Assess
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    const [webhookPosts, matrixPosts] = await Promise.all([
      platforms.discord.waitForPosts(webhook.target, 1),
      platforms.matrix.waitForPosts(matrix.target, 1),
    ]);
    expect(webhookPosts.map((post) => post.body.content)).toEqual(['typed in Slack']);
    expect(webhookPosts[0]?.body.username).toBe(platformUser);
    expect(matrixPosts.map((post) => post.body['io.serverless-chat.origin'])).toEqual([{ roomId, messageId: message?.id }]);
    expect(await platforms.slack.waitForPosts(slack.target, 1, { which: everyRequest, timeoutMs: 1000 })).toEqual([]);
  });
});

describe('a room without a bridge', () => {
  it('keeps its messages away from the relay’s queue: its subscription takes bridged message.created events only', async () => {
    // Prepare: the relay's own subscription on the topic, and a tap of the test's with the same policy on this project.
    const topicArn = runtime().eventTopicArn;
    const relayQueueArn = (
      await sqs().send(new GetQueueAttributesCommand({ QueueUrl: runtime().queueUrls.BridgeRelay, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    const { Subscriptions = [] } = await sns().send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
    const subscription = Subscriptions.find((candidate) => candidate.Endpoint === relayQueueArn);
    const { Attributes = {} } = await sns().send(new GetSubscriptionAttributesCommand({ SubscriptionArn: subscription?.SubscriptionArn }));
    const policy = JSON.parse(Attributes.FilterPolicy ?? '{}');
    expect(policy).toEqual({ type: ['message.created'], bridged: ['true'] });

    const { QueueUrl: tapUrl } = await sqs().send(new CreateQueueCommand({ QueueName: `relay-tap-${project.projectId}` }));
    const tapArn = (await sqs().send(new GetQueueAttributesCommand({ QueueUrl: tapUrl, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn;
    await sns().send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: tapArn,
        Attributes: { RawMessageDelivery: 'true', FilterPolicy: JSON.stringify({ ...policy, projectId: [project.projectId] }) },
      }),
    );
    const plainRoom = await newRoom();
    const bridgedRoom = await newRoom();
    const slack = await slackBridge(bridgedRoom);

    // Act: the unbridged room's messages first, so the bridged one's arrival proves they had their chance.
    for (let index = 0; index < 3; index++) await post(plainRoom, `plain ${index}`);
    await post(bridgedRoom, 'bridged');
    await platforms.slack.waitForPosts(slack.target, 1);

    // Assess
    const seen: { payload: { roomId: string; content: string } }[] = [];
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline && seen.length < 1) {
      const { Messages = [] } = await sqs().send(
        new ReceiveMessageCommand({ QueueUrl: tapUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      seen.push(...Messages.map((message) => JSON.parse(message.Body ?? '{}')));
    }
    const { Messages: late = [] } = await sqs().send(
      new ReceiveMessageCommand({ QueueUrl: tapUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    seen.push(...late.map((message) => JSON.parse(message.Body ?? '{}')));
    expect(seen.map((event) => [event.payload.roomId, event.payload.content])).toEqual([[bridgedRoom, 'bridged']]);
  });
});

describe('a failing platform', () => {
  // The relay's queue waits 180 s before a retry; this file shortens the wait so five receives fit a test.
  const shortVisibility = 1;
  beforeAll(async () => {
    await sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: runtime().queueUrls.BridgeRelay,
        Attributes: { VisibilityTimeout: String(shortVisibility) },
      }),
    );
  });
  afterAll(async () => {
    await sqs().send(
      new SetQueueAttributesCommand({
        QueueUrl: runtime().queueUrls.BridgeRelay,
        Attributes: { VisibilityTimeout: String(relay.visibilityTimeoutSeconds) },
      }),
    );
  });

  it('is retried maxReceiveCount times and the event ends in the DLQ, while the room’s other bridges got it exactly once', async () => {
    // Prepare: Slack answers HTTP 200 with `{ ok: false }`, which is a failure all the same.
    const roomId = await newRoom();
    const slack = await slackBridge(roomId);
    const webhook = await discordWebhookBridge(roomId);
    const matrix = await matrixBridge(roomId);
    await platforms.slack.fail(slack.target, { error: 'not_in_channel' });

    // Act
    const message = await post(roomId, 'does Slack hear this?');

    // Assess
    const deadLetter = await waitForDeadLetter((event) => event.projectId === project.projectId && event.payload.messageId === message.id);
    expect(deadLetter).toMatchObject({ type: 'message.created', payload: { roomId, bridged: true } });
    const attempts = await platforms.slack.posts(slack.target);
    expect(attempts).toHaveLength(relay.maxReceiveCount);
    expect(attempts.every((attempt) => attempt.status === 200 && attempt.body.text.endsWith('does Slack hear this?'))).toBe(true);
    expect(await platforms.discord.posts(webhook.target)).toHaveLength(1);
    expect(await platforms.matrix.posts(matrix.target)).toHaveLength(1);
  }, 60_000);

  it('that answers 429 once gets the message on the retry, once', async () => {
    // Prepare
    const roomId = await newRoom();
    const bot = await discordBotBridge(roomId);
    await platforms.discord.fail(bot.target, { status: 429, retryAfter: 1, times: 1 });

    // Act
    await post(roomId, 'after the rate limit');

    // Assess
    const requests = await platforms.discord.waitForPosts(bot.target, 2, { which: everyRequest, timeoutMs: 20_000, settleMs: 2500 });
    expect(requests.map((request) => [request.status, request.accepted])).toEqual([
      [429, false],
      [200, true],
    ]);
  }, 40_000);
});

describe('deleting a bridge', () => {
  it('stops the relay to its channel; the room’s other bridges still get messages', async () => {
    // Prepare
    const roomId = await newRoom();
    const slack = await slackBridge(roomId);
    const webhook = await discordWebhookBridge(roomId);
    await post(roomId, 'before');
    expect(await platforms.slack.waitForPosts(slack.target, 1)).toHaveLength(1);

    // Act
    expect((await api(`/admin/bridges/${slack.bridgeId}`, { method: 'DELETE', apiKey: project.apiKey })).status).toBe(204);
    await post(roomId, 'after');

    // Assess
    const discordPosts = await platforms.discord.waitForPosts(webhook.target, 2);
    expect(discordPosts.map((posted) => posted.body.content)).toEqual(['before', 'after']);
    expect(
      (await platforms.slack.waitForPosts(slack.target, 2, { which: everyRequest, timeoutMs: 1000 })).map((posted) => posted.body.text),
    ).toEqual([`*${author.userId}*: before`]);
  });
});

/** Reads the relay's dead-letter queue (leaving every message there) until an event `matches`. */
async function waitForDeadLetter(matches: (event: any) => boolean, timeoutMs = 45_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { Messages = [] } = await sqs().send(
      new ReceiveMessageCommand({
        QueueUrl: runtime().queueUrls.BridgeRelayDeadLetter,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        WaitTimeSeconds: 1,
      }),
    );
    const found = Messages.map((message) => JSON.parse(message.Body ?? '{}')).find(matches);
    if (found) return found;
  }
  return undefined;
}
