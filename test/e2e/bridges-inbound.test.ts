import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { config } from '#shared/config';
import { api, createTestProject, newGroupRoom, type TestProject } from '../support/api';
import {
  type DiscordApplicationKeys,
  discordCommandBody,
  discordHeaders,
  discordInteractionBody,
  discordKeyPair,
  discordModalBody,
  discordPingBody,
  matrixHeaders,
  matrixMessageEvent,
  matrixTransactionBody,
  matrixTxnId,
  slackChallengeBody,
  slackEventId,
  slackHeaders,
  slackMessageBody,
  snowflake,
  unixSeconds,
} from '../support/bridge-signers';
import { createBridge } from '../support/bridges';
import { fieldValue, malformedJson, oddString, RawJson, toJsonText } from '../support/fuzz/arbitraries';
import { freshSourceIp, postFrom } from '../support/source-ip';
import { connectWelcomed, type RoomSocket } from '../support/ws';

/**
 * The platforms' webhooks over real HTTP on the shared runtime, signed as each platform signs
 * (test/support/bridge-signers.ts): what they carry becomes room messages seen over a WebSocket,
 * as platform-scoped users; what is not signed right is refused with 401 and writes nothing (the
 * room's history shows it); redeliveries do not duplicate; bots' and the relay's own echoes are ignored.
 */

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('bridges-inbound');
});

const sockets: RoomSocket[] = [];
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((socket) => socket.close()));
});

const SLACK = { teamId: 'T0BRIDGE1', channelId: 'C0BRIDGE1', signingSecret: 'slack-signing-secret-0123456789abcdef' };
const MATRIX = { hsToken: 'hs-token-0123456789abcdef', asToken: 'as-token-0123456789abcdef', matrixRoomId: '!bridged:example.org' };

interface Bridged {
  readonly roomId: string;
  readonly bridgeId: string;
  readonly path: string;
  /** The room's owner, who watches it. */
  readonly token: string;
}

/** A fresh room and a bridge of `platform` on it, created through `POST /admin/bridges` with the API key. */
async function bridgedRoom(platform: 'slack' | 'discord' | 'matrix', fields: Record<string, string>): Promise<Bridged> {
  const { owner, roomId } = await newGroupRoom(project);
  const created = await createBridge(project.apiKey, { platform, roomId, ...fields });
  return { roomId, bridgeId: created.id, path: created.inboundPath, token: owner.token };
}

const slackRoom = (overrides: Record<string, string> = {}) =>
  bridgedRoom('slack', {
    signingSecret: SLACK.signingSecret,
    botToken: 'xoxb-test',
    channelId: SLACK.channelId,
    teamId: SLACK.teamId,
    ...overrides,
  });
const discordRoom = (keys: DiscordApplicationKeys, overrides: Record<string, string> = {}) =>
  bridgedRoom('discord', { publicKey: keys.publicKeyHex, webhookUrl: `https://discord.com/api/webhooks/${snowflake()}/tok`, ...overrides });
const matrixRoom = () =>
  bridgedRoom('matrix', {
    hsToken: MATRIX.hsToken,
    asToken: MATRIX.asToken,
    homeserverUrl: 'https://matrix.example.org',
    matrixRoomId: MATRIX.matrixRoomId,
  });

const history = async (roomId: string) =>
  (await api(`/rooms/${roomId}/messages?limit=100`, { apiKey: project.apiKey })).body.messages as any[];
const said = async (roomId: string) => (await history(roomId)).map((message) => [message.userId, message.content]);

/** The room's owner watching it over a WebSocket. */
async function watch(room: Bridged): Promise<RoomSocket> {
  const socket = await connectWelcomed(room.roomId, room.token, { history: 0 });
  sockets.push(socket);
  return socket;
}
const arrival = (socket: RoomSocket, content: string) =>
  socket.next((frame) => frame.type === 'message' && frame.message.content === content).then((frame) => frame.message);

const send = (path: string, body: string, headers: Record<string, string>, method = 'POST') =>
  api(path, { method, rawBody: body, headers: { 'content-type': 'application/json', ...headers } });

const refusedSignature = { status: 401, body: { error: { code: 'invalid_bridge_signature', message: expect.any(String) } } };
const notFound = { status: 404, body: { error: { code: 'bridge_not_found' } } };

describe('POST /webhooks/bridge/slack/<bridgeId>', () => {
  const message = (text: string, extra: Partial<Parameters<typeof slackMessageBody>[0]> = {}) =>
    slackMessageBody({ teamId: SLACK.teamId, channelId: SLACK.channelId, user: 'U0ALICE', text, ...extra });
  const slack = (room: Bridged, body: string, headers: Record<string, string> = slackHeaders(SLACK.signingSecret, body)) =>
    send(room.path, body, headers);

  it('answers the url_verification handshake with its challenge', async () => {
    // Prepare
    const room = await slackRoom();

    // Act
    const answer = await slack(room, slackChallengeBody('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P'));

    // Assess
    expect(answer).toMatchObject({ status: 200, body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' } });
    expect(await history(room.roomId)).toEqual([]);
  });

  it('posts a channel message as slack:<team>:<user>, seen over a WebSocket, and answers { ok: true }', async () => {
    // Prepare
    const room = await slackRoom();
    const socket = await watch(room);
    const body = message('fish &amp; chips &lt;3 <@U0BOB>');

    // Act
    const answer = await slack(room, body);

    // Assess
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    const seen = await arrival(socket, 'fish & chips <3 <@U0BOB>');
    expect(seen).toMatchObject({
      roomId: room.roomId,
      userId: `slack:${SLACK.teamId}:U0ALICE`,
      clientMessageId: expect.stringMatching(/^bridge:[0-9a-f]{40}$/),
    });
    expect(await said(room.roomId)).toEqual([[`slack:${SLACK.teamId}:U0ALICE`, 'fish & chips <3 <@U0BOB>']]);
  });

  it('posts a redelivered event (X-Slack-Retry-Num, same event_id) once', async () => {
    // Prepare
    const room = await slackRoom();
    const eventId = slackEventId();
    const body = message('said once', { eventId });
    const first = await slack(room, body);

    // Act
    const retries = [];
    for (const retry of [1, 2]) {
      // Slack signs each delivery anew, with its own timestamp.
      const headers = {
        ...slackHeaders(SLACK.signingSecret, body, unixSeconds() + retry),
        'x-slack-retry-num': String(retry),
        'x-slack-retry-reason': 'http_timeout',
      };
      retries.push(await slack(room, body, headers));
    }
    const sameRequestAgain = await slack(room, body);

    // Assess
    expect([first, ...retries, sameRequestAgain].map((answer) => [answer.status, answer.body])).toEqual(Array(4).fill([200, { ok: true }]));
    expect(await said(room.roomId)).toEqual([[`slack:${SLACK.teamId}:U0ALICE`, 'said once']]);
  });

  it('refuses tampered bodies, stale or future timestamps, replays, another secret and missing signatures with 401, writing nothing', async () => {
    // Prepare
    const room = await slackRoom();
    const body = message('must not arrive');
    const now = unixSeconds();
    const capturedSixMinutesAgo = slackHeaders(SLACK.signingSecret, body, now - 360);
    const attempts = {
      tampered: [body.replace('must not arrive', 'forged text'), slackHeaders(SLACK.signingSecret, body)],
      stale: [body, slackHeaders(SLACK.signingSecret, body, now - config.BRIDGE_SIGNATURE_MAX_AGE_SECONDS - 5)],
      future: [body, slackHeaders(SLACK.signingSecret, body, now + config.BRIDGE_SIGNATURE_MAX_AGE_SECONDS + 5)],
      replayedStale: [body, capturedSixMinutesAgo],
      replayedStaleWithFreshTimestamp: [body, { ...capturedSixMinutesAgo, 'x-slack-request-timestamp': String(now) }],
      otherSecret: [body, slackHeaders('not-the-signing-secret', body)],
      missingSignature: [body, { 'x-slack-request-timestamp': String(now) }],
      missingEverything: [body, {}],
      notJsonUnsigned: ['this is not json', { 'x-slack-request-timestamp': String(now), 'x-slack-signature': `v0=${'0'.repeat(64)}` }],
    } as const;

    // Act
    const answers = await Promise.all(
      Object.entries(attempts).map(
        async ([name, [sent, headers]]) => [name, await slack(room, sent, headers as Record<string, string>)] as const,
      ),
    );

    // Assess
    for (const [name, answer] of answers) expect({ name, ...answer }).toMatchObject({ name, ...refusedSignature });
    expect(await history(room.roomId)).toEqual([]);
  });

  it('ignores bots, edits, other channels and workspaces, other event types and empty text, answering { ok: true }', async () => {
    // Prepare
    const room = await slackRoom();
    const bodies = [
      message('from a bot', { extra: { bot_id: 'B0BOT', subtype: 'bot_message' } }),
      message('from an app with a user', { extra: { bot_id: 'B0APP' } }),
      message('edited', { extra: { subtype: 'message_changed' } }),
      message('joined', { extra: { subtype: 'channel_join' } }),
      message('elsewhere', { channelId: 'C0ELSEWHERE' }),
      message('other workspace', { teamId: 'T0OTHER' }),
      message('   '),
      JSON.stringify({
        type: 'event_callback',
        team_id: SLACK.teamId,
        event_id: slackEventId(),
        event: { type: 'reaction_added', user: 'U0ALICE', reaction: 'fish' },
      }),
      JSON.stringify({ type: 'app_rate_limited', team_id: SLACK.teamId, minute_rate_limited: 1518467820 }),
    ];
    const control = message('the one that counts', { extra: { subtype: 'thread_broadcast' } });

    // Act
    const answers = [];
    for (const body of [...bodies, control]) answers.push(await slack(room, body));

    // Assess
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual(Array(bodies.length + 1).fill([200, { ok: true }]));
    expect(await said(room.roomId)).toEqual([[`slack:${SLACK.teamId}:U0ALICE`, 'the one that counts']]);
  });

  it('answers a signed body that is no Slack envelope with 400 in the error shape', async () => {
    // Prepare
    const room = await slackRoom();
    const bodies = [
      'not json at all',
      '[]',
      '{"type":"event_callback","team_id":"T0BRIDGE1","event":{"type":"message"}}',
      '{"type":"url_verification"}',
      '{}',
    ];

    // Act
    const answers = await Promise.all(bodies.map((body) => slack(room, body)));

    // Assess
    for (const answer of answers)
      expect(answer).toMatchObject({
        status: 400,
        body: { error: { code: expect.stringMatching(/^(invalid_json|validation_failed)$/), message: expect.any(String) } },
      });
    expect(await history(room.roomId)).toEqual([]);
  });

  it(`cuts text longer than MESSAGE_MAX_LENGTH (${config.MESSAGE_MAX_LENGTH}) to fit, ending in an ellipsis`, async () => {
    // Prepare
    const room = await slackRoom();
    const long = 'x'.repeat(config.MESSAGE_MAX_LENGTH + 500);

    // Act
    const answer = await slack(room, message(long));

    // Assess
    expect(answer.status).toBe(200);
    const [stored] = await history(room.roomId);
    expect(stored.content).toBe(`${'x'.repeat(config.MESSAGE_MAX_LENGTH - 1)}…`);
  });
});

describe('POST /webhooks/bridge/discord/<bridgeId>', () => {
  const application = discordKeyPair();
  const guild = { userId: snowflake(), guildId: snowflake() };
  const discord = (room: Bridged, body: string, headers: Record<string, string> = discordHeaders(application.privateKey, body)) =>
    send(room.path, body, headers);
  const shown = (content: string) => ({ status: 200, body: { type: 4, data: { content, allowed_mentions: { parse: [] } } } });

  it('answers the PING Discord checks the endpoint with', async () => {
    // Prepare
    const room = await discordRoom(application);

    // Act
    const answer = await discord(room, discordPingBody());

    // Assess
    expect(answer).toMatchObject({ status: 200, body: { type: 1 } });
  });

  it('posts /chat message:<text> as discord:<guild>:<user>, seen over a WebSocket, and shows the text in the channel', async () => {
    // Prepare
    const room = await discordRoom(application);
    const socket = await watch(room);

    // Act
    const answer = await discord(room, discordCommandBody(guild, 'hello from discord @everyone'));

    // Assess
    expect(answer).toMatchObject(shown('hello from discord @everyone'));
    const seen = await arrival(socket, 'hello from discord @everyone');
    expect(seen.userId).toBe(`discord:${guild.guildId}:${guild.userId}`);
  });

  it('posts a modal’s text inputs, and a command in a DM as discord:dm:<user>', async () => {
    // Prepare
    const room = await discordRoom(application);
    const dmUser = snowflake();

    // Act
    const modal = await discord(room, discordModalBody(guild, ['first line', 'second line']));
    const dm = await discord(room, discordCommandBody({ userId: dmUser }, 'from a dm'));

    // Assess
    expect(modal).toMatchObject(shown('first line\nsecond line'));
    expect(dm).toMatchObject(shown('from a dm'));
    expect(await said(room.roomId)).toEqual([
      [`discord:${guild.guildId}:${guild.userId}`, 'first line\nsecond line'],
      [`discord:dm:${dmUser}`, 'from a dm'],
    ]);
  });

  it('posts the same interaction once, however often it comes', async () => {
    // Prepare
    const room = await discordRoom(application);
    const body = discordCommandBody(guild, 'only once');

    // Act
    const answers = [];
    for (let delivery = 0; delivery < 3; delivery++)
      answers.push(await discord(room, body, discordHeaders(application.privateKey, body, unixSeconds() - delivery)));

    // Assess
    for (const answer of answers) expect(answer).toMatchObject(shown('only once'));
    expect(await said(room.roomId)).toEqual([[`discord:${guild.guildId}:${guild.userId}`, 'only once']]);
  });

  it('refuses tampered bodies, another key, stale or future timestamps and bad headers with 401, writing nothing', async () => {
    // Prepare
    const room = await discordRoom(application);
    const stranger = discordKeyPair();
    const body = discordCommandBody(guild, 'must not arrive');
    const now = unixSeconds();
    const good = discordHeaders(application.privateKey, body, now);
    const attempts: [string, string, Record<string, string>][] = [
      ['tampered', body.replace('must not arrive', 'forged text'), good],
      ['another key', body, discordHeaders(stranger.privateKey, body, now)],
      ['stale', body, discordHeaders(application.privateKey, body, now - config.BRIDGE_SIGNATURE_MAX_AGE_SECONDS - 5)],
      ['future', body, discordHeaders(application.privateKey, body, now + config.BRIDGE_SIGNATURE_MAX_AGE_SECONDS + 5)],
      ['timestamp swapped', body, { ...discordHeaders(application.privateKey, body, now - 30), 'x-signature-timestamp': String(now) }],
      ['malformed signature', body, { ...good, 'x-signature-ed25519': 'zz' }],
      ['no signature', body, { 'x-signature-timestamp': String(now) }],
      ['not json, unsigned', '<xml/>', { 'x-signature-timestamp': String(now), 'x-signature-ed25519': '0'.repeat(128) }],
    ];

    // Act
    const answers = await Promise.all(attempts.map(async ([name, sent, headers]) => ({ name, ...(await discord(room, sent, headers)) })));

    // Assess
    for (const answer of answers) expect(answer).toMatchObject({ name: answer.name, ...refusedSignature });
    expect(await history(room.roomId)).toEqual([]);
  });

  it('tells the user alone what it does not take: other interaction types, empty text, a channel other than the bot bridge’s', async () => {
    // Prepare
    const botRoom = await discordRoom(application, { botToken: 'bot-token', channelId: '1000000000000000002' });
    const ephemeral = { status: 200, body: { type: 4, data: { flags: 64, content: expect.any(String) } } };

    // Act
    const button = await discord(botRoom, discordInteractionBody(3, guild, { custom_id: 'x', component_type: 2 }));
    const empty = await discord(botRoom, discordCommandBody(guild, '  '));
    const elsewhere = await discord(botRoom, discordCommandBody({ ...guild, channelId: '1000000000000000009' }, 'elsewhere'));
    const autocomplete = await discord(botRoom, discordInteractionBody(4, guild, { name: 'chat', options: [] }));
    const here = await discord(botRoom, discordCommandBody(guild, 'here'));

    // Assess
    expect(button).toMatchObject(ephemeral);
    expect(empty).toMatchObject(ephemeral);
    expect(elsewhere).toMatchObject(ephemeral);
    expect(autocomplete).toMatchObject({ status: 200, body: { type: 8, data: { choices: [] } } });
    expect(here).toMatchObject(shown('here'));
    expect(await said(botRoom.roomId)).toEqual([[`discord:${guild.guildId}:${guild.userId}`, 'here']]);
  });

  it('answers a signed body that is no interaction with 400, and reads options no deeper than Discord nests them', async () => {
    // Prepare
    const room = await discordRoom(application);

    const bodies = ['not json', '{"type":2}', '{"id":"1","type":"two"}', '{"id":"1","type":2,"data":{"options":"message"}}'];
    // Deeper than Discord nests options: what lies below a subcommand's options is not read.
    const nested = (depth: number) =>
      `${'[{"name":"a","type":1,"options":'.repeat(depth)}[{"name":"m","type":3,"value":"deep"}]${'}]'.repeat(depth)}`;
    const interaction = (options: string) =>
      `{"id":"${snowflake()}","type":2,"member":{"user":{"id":"1"}},"guild_id":"2","data":{"options":${options}}}`;

    // Act
    const answers = await Promise.all(bodies.map((body) => discord(room, body)));
    const deepest = await discord(room, interaction(nested(20_000)));
    const subcommand = await discord(room, interaction(nested(2)));

    // Assess
    for (const answer of answers) expect(answer).toMatchObject({ status: 400, body: { error: { code: expect.any(String) } } });
    expect(deepest).toMatchObject({ status: 200, body: { type: 4, data: { flags: 64 } } });
    expect(subcommand).toMatchObject({ status: 200, body: { type: 4, data: { content: 'deep' } } });
    expect(await said(room.roomId)).toEqual([['discord:2:1', 'deep']]);
  });
});

describe('Matrix application service transactions', () => {
  const alice = '@alice:example.org';
  const text = (body: string, extra: Partial<Parameters<typeof matrixMessageEvent>[0]> = {}) =>
    matrixMessageEvent({ roomId: MATRIX.matrixRoomId, sender: alice, body, ...extra });
  const putPath = (room: Bridged, txnId: string) => `${room.path}/_matrix/app/v1/transactions/${txnId}`;

  it('posts the linked room’s m.text, m.notice and m.emote as matrix:<mxid> (POST /webhooks/matrix/<bridgeId>) and answers {}', async () => {
    // Prepare
    const room = await matrixRoom();
    const socket = await watch(room);
    const body = matrixTransactionBody([
      text('hi from matrix'),
      text('a notice', { msgtype: 'm.notice' }),
      text('waves', { msgtype: 'm.emote' }),
    ]);

    // Act
    const answer = await send(room.path, body, matrixHeaders(MATRIX.hsToken));

    // Assess
    expect(answer).toMatchObject({ status: 200, body: {} });
    expect((await arrival(socket, 'hi from matrix')).userId).toBe(`matrix:${alice}`);
    expect(await said(room.roomId)).toEqual([
      [`matrix:${alice}`, 'hi from matrix'],
      [`matrix:${alice}`, 'a notice'],
      [`matrix:${alice}`, '* waves'],
    ]);
  });

  it('takes the homeserver’s PUT with the legacy access_token query, and a replayed transaction writes nothing new', async () => {
    // Prepare
    const room = await matrixRoom();
    const txnId = matrixTxnId();
    const body = matrixTransactionBody([text('first'), text('second')]);
    const path = `${putPath(room, txnId)}?access_token=${MATRIX.hsToken}`;

    // Act
    const first = await send(path, body, {}, 'PUT');
    const replayed = await send(path, body, {}, 'PUT');
    const replayedOnSpecRoute = await send(room.path, body, matrixHeaders(MATRIX.hsToken));

    // Assess
    for (const answer of [first, replayed, replayedOnSpecRoute]) expect(answer).toMatchObject({ status: 200, body: {} });
    expect(await said(room.roomId)).toEqual([
      [`matrix:${alice}`, 'first'],
      [`matrix:${alice}`, 'second'],
    ]);
  });

  it('ignores the relay’s echoes, other rooms, edits, other event and message types', async () => {
    // Prepare
    const room = await matrixRoom();
    const events = [
      text('relayed from the room', { content: { 'io.serverless-chat.origin': { roomId: room.roomId, messageId: 1 } } }),
      text('other room', { roomId: '!elsewhere:example.org' }),
      text('* edited', {
        content: { 'm.new_content': { msgtype: 'm.text', body: 'edited' }, 'm.relates_to': { rel_type: 'm.replace', event_id: '$x' } },
      }),
      text('an image', { msgtype: 'm.image' }),
      text('   '),
      {
        type: 'm.room.member',
        room_id: MATRIX.matrixRoomId,
        sender: alice,
        event_id: '$member',
        state_key: alice,
        content: { membership: 'join' },
      },
      { type: 'm.reaction', room_id: MATRIX.matrixRoomId, sender: alice, event_id: '$reaction', content: {} },
      text('kept'),
    ];

    // Act
    const answer = await send(putPath(room, matrixTxnId()), matrixTransactionBody(events), matrixHeaders(MATRIX.hsToken), 'PUT');

    // Assess
    expect(answer).toMatchObject({ status: 200, body: {} });
    expect(await said(room.roomId)).toEqual([[`matrix:${alice}`, 'kept']]);
  });

  it('refuses a wrong, missing or misplaced hs_token (the as_token included) with 401 on both routes, writing nothing', async () => {
    // Prepare
    const room = await matrixRoom();
    const body = matrixTransactionBody([text('must not arrive')]);
    const put = putPath(room, matrixTxnId());
    const attempts: [string, string, string, Record<string, string>][] = [
      ['wrong token', 'POST', room.path, matrixHeaders('not-the-hs-token')],
      ['as_token', 'POST', room.path, matrixHeaders(MATRIX.asToken)],
      ['missing', 'POST', room.path, {}],
      ['not bearer', 'POST', room.path, { authorization: MATRIX.hsToken }],
      ['wrong token, PUT', 'PUT', put, matrixHeaders(`${MATRIX.hsToken}x`)],
      ['wrong query token, PUT', 'PUT', `${put}?access_token=wrong`, {}],
    ];

    // Act
    const answers = await Promise.all(
      attempts.map(async ([name, method, path, headers]) => ({ name, ...(await send(path, body, headers, method)) })),
    );
    const unsignedNonsense = await send(room.path, 'not json', {});

    // Assess
    for (const answer of answers) expect(answer).toMatchObject({ name: answer.name, ...refusedSignature });
    expect(unsignedNonsense).toMatchObject(refusedSignature);
    expect(await history(room.roomId)).toEqual([]);
  });

  it('answers a body that is no transaction with 400', async () => {
    // Prepare
    const room = await matrixRoom();

    // Act
    const answers = await Promise.all(
      ['not json', '{}', '{"events":{}}', '{"events":[{"content":{}}]}'].map((body) =>
        send(room.path, body, matrixHeaders(MATRIX.hsToken)),
      ),
    );

    // Assess
    for (const answer of answers) expect(answer).toMatchObject({ status: 400, body: { error: { code: expect.any(String) } } });
  });
});

describe('the bridge in the path', () => {
  it('answers 404 bridge_not_found for ids of no bridge and for a bridge of another platform, before any signature', async () => {
    // Prepare
    const slack = await slackRoom();
    const matrix = await matrixRoom();
    const body = slackMessageBody({ teamId: SLACK.teamId, channelId: SLACK.channelId, user: 'U0ALICE', text: 'lost' });
    const signed = slackHeaders(SLACK.signingSecret, body);
    const noSuchBridge = `br_${project.projectId}_${'0'.repeat(24)}`;

    // Act
    const answers = await Promise.all([
      send(`/webhooks/bridge/slack/${noSuchBridge}`, body, signed),
      send(`/webhooks/bridge/slack/br_no-such-project_${'0'.repeat(24)}`, body, signed),
      send(`/webhooks/bridge/discord/${slack.bridgeId}`, body, signed),
      send(`/webhooks/matrix/${slack.bridgeId}`, body, matrixHeaders(MATRIX.hsToken)),
      send(`/webhooks/bridge/slack/${matrix.bridgeId}`, body, signed),
      send(`/webhooks/matrix/${noSuchBridge}/_matrix/app/v1/transactions/t1`, body, matrixHeaders(MATRIX.hsToken), 'PUT'),
    ]);

    // Assess
    for (const answer of answers) expect(answer).toMatchObject(notFound);
    expect(await history(slack.roomId)).toEqual([]);
  });

  it('answers a malformed bridge id with 400 naming path.bridgeId, as the admin routes do', async () => {
    // Act
    const answer = await send('/webhooks/bridge/slack/not-a-bridge-id', '{}', {});

    // Assess
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'path.bridgeId' }] } } });
  });

  it('stops answering once the bridge is deleted', async () => {
    // Prepare
    const room = await slackRoom();
    await api(`/admin/bridges/${room.bridgeId}`, { method: 'DELETE', apiKey: project.apiKey });
    const body = slackMessageBody({ teamId: SLACK.teamId, channelId: SLACK.channelId, user: 'U0ALICE', text: 'after the end' });

    // Act
    const answer = await send(room.path, body, slackHeaders(SLACK.signingSecret, body));

    // Assess
    expect(answer).toMatchObject(notFound);
    expect(await history(room.roomId)).toEqual([]);
  });
});

describe(`RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE (${config.RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE}): refusals, not the platforms' traffic`, () => {
  const limit = config.RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE;
  const event = (text: string) => JSON.parse(slackMessageBody({ teamId: SLACK.teamId, channelId: SLACK.channelId, user: 'U0ALICE', text }));
  const signedFrom = (sourceIp: string, room: Bridged, payload: unknown) =>
    postFrom(sourceIp, room.path, payload, slackHeaders(SLACK.signingSecret, JSON.stringify(payload)));
  const forgedFrom = (sourceIp: string, room: Bridged, payload: unknown) =>
    postFrom(sourceIp, room.path, payload, slackHeaders('not-the-signing-secret', JSON.stringify(payload)));
  /** `count` requests from `sourceIp`, 20 at a time; the statuses answered. */
  const burst = async (count: number, send: () => Promise<{ status: number }>) => {
    const statuses: number[] = [];
    for (let sent = 0; sent < count; sent += 20) {
      statuses.push(...(await Promise.all(Array.from({ length: Math.min(20, count - sent) }, send))).map((answer) => answer.status));
    }
    return statuses;
  };
  // The limit counts in fixed minute windows: a burst that crosses into the next one starts a fresh budget.
  const startEarlyInTheMinute = async () => {
    const intoWindowMs = Date.now() % 60_000;
    if (intoWindowMs > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindowMs + 50));
  };

  it("never holds back a platform's genuine events, however many come from one address", async () => {
    // Prepare
    const room = await slackRoom();
    const ip = freshSourceIp();

    // Act
    const statuses = await burst(limit + 10, () => signedFrom(ip, room, event(`genuine ${randomUUID()}`)));

    // Assess
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await history(room.roomId)).toHaveLength(limit + 10);
  }, 60_000);

  it('refuses an address that sent too many requests for unknown bridges, on every bridge, until the minute ends', async () => {
    // Prepare
    const room = await slackRoom();
    const ip = freshSourceIp();
    await startEarlyInTheMinute();

    // Act
    const unknown = await burst(limit + 1, () => postFrom(ip, `/webhooks/matrix/br_${project.projectId}_${'0'.repeat(24)}`, {}));
    const genuine = await signedFrom(ip, room, event('from an address over its budget'));
    const elsewhere = await signedFrom(freshSourceIp(), room, event('from another address'));

    // Assess: the refusals stand as they were; then the address gets 429 and writes nothing
    expect(new Set(unknown)).toEqual(new Set([404]));
    expect(genuine).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(genuine.retryAfter)).toBeGreaterThan(0);
    expect(elsewhere.status).toBe(200);
    expect((await said(room.roomId)).map(([, content]) => content)).toEqual(['from another address']);
  }, 60_000);

  it('holds bad signatures to the budget per address and bridge: that bridge refuses the address, another bridge does not', async () => {
    // Prepare
    const [attacked, other] = await Promise.all([slackRoom(), slackRoom()]);
    const ip = freshSourceIp();
    await startEarlyInTheMinute();

    // Act
    const forged = await burst(limit + 1, () => forgedFrom(ip, attacked, event('forged')));
    const onAttacked = await signedFrom(ip, attacked, event('genuine, on the attacked bridge'));
    const onOther = await signedFrom(ip, other, event('genuine, on another bridge'));

    // Assess
    expect(new Set(forged)).toEqual(new Set([401]));
    expect(onAttacked.status).toBe(429);
    expect(onOther.status).toBe(200);
    expect(await history(attacked.roomId)).toEqual([]);
    expect((await said(other.roomId)).map(([, content]) => content)).toEqual(['genuine, on another bridge']);
  }, 60_000);
});

describe('signed bodies of any shape', () => {
  /** A field as the platform sends it, or any odd JSON value (deep, huge, odd numbers) in its place. */
  const either = <T>(plausible: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: fieldValue() }, { weight: 1, arbitrary: fc.constant(undefined) });
  const deepOptions = (depth: number) =>
    new RawJson(`${'[{"name":"a","type":1,"options":'.repeat(depth)}[]${'}]'.repeat(depth)}`, `options ${depth} deep`);

  async function expectNoFault(
    path: string,
    bodies: fc.Arbitrary<unknown>,
    headersFor: (text: string) => Record<string, string>,
    method = 'POST',
  ) {
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const text = typeof body === 'string' ? body : toJsonText(body);
        const answer = await send(path, text, headersFor(text), method);
        expect([200, 400, 413], `${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)} for ${text.slice(0, 300)}`).toContain(
          answer.status,
        );
        if (answer.status >= 400) expect(answer.body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
      }),
      { numRuns: 30 },
    );
  }

  it('Slack: a 200 or a 4xx in the error shape, never a 5xx', async () => {
    const room = await slackRoom();
    const event = fc.record({
      type: either(fc.constantFrom('message', 'app_mention')),
      subtype: either(fc.constantFrom('thread_broadcast', 'bot_message', 'me_message')),
      channel: either(fc.constant(SLACK.channelId)),
      user: either(fc.oneof(fc.constant('U0ALICE'), oddString)),
      text: either(fc.oneof(oddString, fc.string({ maxLength: 5000 }))),
      bot_id: either(fc.constant(null)),
      user_team: either(oddString),
    });
    const envelope = fc.record({
      type: either(fc.constantFrom('event_callback', 'url_verification', 'app_rate_limited')),
      event_id: either(fc.oneof(fc.constant(slackEventId()), oddString)),
      team_id: either(fc.constant(SLACK.teamId)),
      challenge: either(oddString),
      event: either(event),
    });
    await expectNoFault(room.path, fc.oneof(envelope, malformedJson), (text) => slackHeaders(SLACK.signingSecret, text));
  }, 60_000);

  it('Discord: a 200 or a 4xx in the error shape, never a 5xx', async () => {
    const application = discordKeyPair();
    const room = await discordRoom(application);
    const option = fc.record({ name: either(fc.constant('message')), type: either(fc.constantFrom(1, 2, 3)), value: either(oddString) });
    const interaction = fc.record({
      id: either(fc.oneof(fc.constant(snowflake()), oddString)),
      type: either(fc.constantFrom(1, 2, 3, 4, 5, 6)),
      guild_id: either(fc.constant(snowflake())),
      member: either(fc.record({ user: either(fc.record({ id: either(fc.constant(snowflake())) })) })),
      user: either(fc.record({ id: either(fc.constant(snowflake())) })),
      data: either(
        fc.record({
          options: either(
            fc.oneof(fc.array(either(option), { maxLength: 3 }), fc.constant(deepOptions(5)), fc.constant(deepOptions(20_000))),
          ),
          components: either(
            fc.array(
              either(
                fc.record({
                  type: either(fc.constantFrom(1, 4, 18)),
                  value: either(oddString),
                  components: either(fc.array(fieldValue(), { maxLength: 3 })),
                  component: either(fieldValue()),
                }),
              ),
              { maxLength: 3 },
            ),
          ),
        }),
      ),
    });
    await expectNoFault(room.path, fc.oneof(interaction, malformedJson), (text) => discordHeaders(application.privateKey, text));
  }, 60_000);

  it('Matrix: a 200 or a 4xx in the error shape, never a 5xx', async () => {
    const room = await matrixRoom();
    const event = fc.record({
      type: either(fc.constantFrom('m.room.message', 'm.room.member')),
      room_id: either(fc.constant(MATRIX.matrixRoomId)),
      sender: either(fc.oneof(fc.constant('@alice:example.org'), oddString)),
      event_id: either(fc.oneof(fc.constant('$e'), oddString)),
      content: either(
        fc.record({
          msgtype: either(fc.constantFrom('m.text', 'm.emote', 'm.image')),
          body: either(fc.oneof(oddString, fc.string({ maxLength: 5000 }))),
          'm.relates_to': either(fieldValue()),
          'io.serverless-chat.origin': either(fieldValue()),
        }),
      ),
    });
    const transaction = fc.record({ events: either(fc.array(either(event), { maxLength: 4 })) });
    await expectNoFault(
      `${room.path}/_matrix/app/v1/transactions/fuzz`,
      fc.oneof(transaction, malformedJson),
      () => matrixHeaders(MATRIX.hsToken),
      'PUT',
    );
  }, 60_000);
});
