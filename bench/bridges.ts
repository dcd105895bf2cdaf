/**
 * Bridges to Slack, Discord and Matrix (docs/bridges.md), in two benches:
 *
 * - `bridgeInbound`, with the queue consumers still off (so only the request path is measured):
 *   signed Slack events through `POST /webhooks/bridge/slack/<id>` (the signature check and the
 *   message pipeline) beside plain `POST /messages`, the same senders, the same run, alternating
 *   halves; and the DynamoDB and queue requests of `POST /messages` in a room without a bridge of
 *   a project that has bridges (the relay costs such a message nothing).
 * - `bridgeRelay`, with the consumers on: room message → arrival at the local Slack, Discord and
 *   Matrix stand-ins (test/support/bridge-platforms/, whose URLs bench/run.ts gives the runtime),
 *   and how often the relay's function ran for messages of rooms with and without a bridge.
 */
import { standInClient, startMatrixStandIn } from '../test/support/bridge-platforms';
import { discordKeyPair, slackHeaders, slackMessageBody } from '../test/support/bridge-signers';
import { type Bench, type Context, fmt } from './harness';
import { recording } from './instrument';
import { type Api, createProject, latencySummary, MESSAGE_CONTENT, round, runUntil, sleep, sum, uniqueId } from './util';

export const BRIDGE_GOALS = {
  /** Inbound bridge events per second ÷ plain `POST /messages` per second, same run. */
  inboundRatio: 0.8,
  /** Room message → arrival at a platform stand-in, p99. */
  relayP99Ms: 1000,
} as const;

const SENDERS = 16;
const RELAY_MESSAGES = 100;
const RELAY_RATE = 20;
const UNBRIDGED_MESSAGES = 100;

/** `SENDERS` closed-loop senders calling `op` for `ms`: each call's latency, the failures and the seconds it took. */
async function closedLoop(ms: number, op: (sender: number) => Promise<boolean>) {
  const started = performance.now();
  const latencies: number[] = [];
  const failures = await runUntil(SENDERS, started + ms, op, latencies);
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}

/** POSTs a body as given (the signature covers these bytes), answering whether the status was `expected`. */
async function postText(api: Api, path: string, headers: Record<string, string>, text: string, expected: number) {
  const response = await fetch(`${api.baseUrl}${path}`, { method: 'POST', headers, body: text });
  await response.arrayBuffer();
  return response.status === expected;
}

async function measureInbound({ service, settings, log }: Context) {
  const { api, clients } = service;
  const project = await createProject(api, 'bridge-inbound');
  const tokens = await Promise.all(Array.from({ length: SENDERS }, (_, index) => project.token(`sender-${index}`)));
  const owner = tokens[0] as string;
  const plainRoom = uniqueId('plain');
  const bridgedRoom = uniqueId('bridged');
  const members = Array.from({ length: SENDERS - 1 }, (_, index) => `sender-${index + 1}`);
  for (const id of [plainRoom, bridgedRoom]) await api.expect(201, '/rooms', { token: owner, body: { id, type: 'group', members } });
  const signingSecret = `bench-${uniqueId('secret')}`;
  const channelId = 'CBENCH0001';
  const bridge = (
    await api.expect(201, '/admin/bridges', {
      apiKey: project.apiKey,
      body: { platform: 'slack', roomId: bridgedRoom, signingSecret, botToken: 'xoxb-bench', channelId },
    })
  ).body as { id: string; inboundPath: string };

  // Signed ahead, as Slack signs before it sends: the senders' CPU is the HTTP call alone, as for POST /messages.
  const signed = () => {
    const text = slackMessageBody({ teamId: 'TBENCH', channelId, user: `U${Math.floor(Math.random() * 1e9)}`, text: MESSAGE_CONTENT });
    return { text, headers: slackHeaders(signingSecret, text) };
  };
  let pool: { text: string; headers: Record<string, string> }[] = [];
  const refill = (count: number) => {
    pool = Array.from({ length: count }, signed);
  };
  const inbound = () => {
    const next = pool.pop() ?? signed();
    return postText(api, bridge.inboundPath, next.headers, next.text, 200);
  };
  const plainBody = JSON.stringify({ roomId: plainRoom, content: MESSAGE_CONTENT });
  const plain = (sender: number) =>
    postText(api, '/messages', { authorization: `Bearer ${tokens[sender]}`, 'content-type': 'application/json' }, plainBody, 201);

  // Warm-up of both paths (handler modules, caches, the JIT), then two alternating halves of each.
  refill(4000);
  await closedLoop(settings.warmupMs, plain);
  await closedLoop(settings.warmupMs, inbound);
  const half = settings.measureMs / 2;
  const runs = { plain: [] as Awaited<ReturnType<typeof closedLoop>>[], inbound: [] as Awaited<ReturnType<typeof closedLoop>>[] };
  for (let round = 0; round < 2; round++) {
    runs.plain.push(await closedLoop(half, plain));
    refill(8000);
    runs.inbound.push(await closedLoop(half, inbound));
  }
  const summary = (parts: typeof runs.plain) => {
    const latencies = parts.flatMap((part) => part.latencies);
    return {
      perSecond: round(latencies.length / sum(parts.map((part) => part.seconds)), 1),
      failures: sum(parts.map((part) => part.failures)),
      latencyMs: latencySummary(latencies),
    };
  };
  const result = { senders: SENDERS, plain: summary(runs.plain), inbound: summary(runs.inbound) };

  // What each path asks of DynamoDB and the queues, one message at a time, every sender's caches warm
  // (as in the message cost section): a room without a bridge in this project that has one, and a Slack event.
  const requestsOf = async (send: (index: number) => Promise<unknown>) => {
    for (let index = 0; index < SENDERS; index++) await send(index);
    return recording(clients, async (recorder) => {
      for (let index = 0; index < UNBRIDGED_MESSAGES; index++) await send(index);
      const commands: Record<string, number> = {};
      for (const call of recorder.dynamo) commands[call.command] = round((commands[call.command] ?? 0) + 1 / UNBRIDGED_MESSAGES, 2);
      return {
        dynamoRequestsPerMessage: round(recorder.dynamo.length / UNBRIDGED_MESSAGES, 2),
        queueRequestsPerMessage: round(recorder.sqs.length / UNBRIDGED_MESSAGES, 2),
        commands,
      };
    });
  };
  const unbridged = {
    messages: UNBRIDGED_MESSAGES,
    ...(await requestsOf((index) =>
      api.expect(201, '/messages', { token: tokens[index % SENDERS], body: { roomId: plainRoom, content: MESSAGE_CONTENT } }),
    )),
  };
  refill(SENDERS + UNBRIDGED_MESSAGES);
  const inboundRequests = await requestsOf(async () => {
    if (!(await inbound())) throw new Error('bridge inbound bench: a signed Slack event was refused');
  });
  log(
    `  inbound ${result.inbound.perSecond}/s (p99 ${result.inbound.latencyMs.p99} ms) vs POST /messages ${result.plain.perSecond}/s (p99 ${result.plain.latencyMs.p99} ms); unbridged room: ${unbridged.dynamoRequestsPerMessage} DynamoDB, ${unbridged.queueRequestsPerMessage} queue requests per message`,
  );
  return { ...result, ratio: round(result.inbound.perSecond / result.plain.perSecond, 2), unbridged, inboundRequests };
}

type Inbound = Awaited<ReturnType<typeof measureInbound>>;

export const bridgeInbound: Bench<Inbound> = {
  id: 'bridgeInbound',
  name: 'Bridge webhooks',
  needs: 'service',
  run: measureInbound,
  goals: (result) => [
    {
      id: 'bridges.inboundRatio',
      name: 'Inbound Slack events per second ÷ POST /messages per second (16 senders, same run)',
      target: `≥ ${BRIDGE_GOALS.inboundRatio} ×`,
      measured: `${result.ratio} × (${result.inbound.perSecond} vs ${result.plain.perSecond} /s)`,
      pass: result.ratio >= BRIDGE_GOALS.inboundRatio,
    },
    {
      id: 'bridges.unbridgedCost',
      name: 'POST /messages in a room without a bridge: DynamoDB and queue requests',
      target: '≤ 3 and 0 (no request added)',
      measured: `${result.unbridged.dynamoRequestsPerMessage} and ${result.unbridged.queueRequestsPerMessage}`,
      pass: result.unbridged.dynamoRequestsPerMessage <= 3 && result.unbridged.queueRequestsPerMessage === 0,
    },
  ],
  section: (result) => `## Bridges: inbound webhooks

${result.senders} closed-loop senders in the bench process, each for two alternating halves of the measurement: signed Slack Events API requests (\`event_callback\` messages, each a fresh \`event_id\`, signed ahead as Slack does) to \`POST /webhooks/bridge/slack/<bridgeId>\`, which checks the HMAC over the raw body and the timestamp, parses the envelope and sends the message through the one message pipeline as \`slack:<team>:<user>\` (a \`clientMessageId\` reservation included: redeliveries are idempotent); and plain \`POST /messages\` with a user JWT into a room without a bridge. Queue consumers are off, so both figures are the request path alone.

| Path | Requests/s | p50 ms | p99 ms | Failures |
| --- | --- | --- | --- | --- |
| \`POST /messages\` | ${result.plain.perSecond} | ${fmt(result.plain.latencyMs.p50)} | ${fmt(result.plain.latencyMs.p99)} | ${result.plain.failures} |
| Slack event → room message | ${result.inbound.perSecond} | ${fmt(result.inbound.latencyMs.p50)} | ${fmt(result.inbound.latencyMs.p99)} | ${result.inbound.failures} |

Ratio: ${result.ratio} ×. Per message, one at a time with warm caches: a plain message ${result.unbridged.dynamoRequestsPerMessage} DynamoDB requests (${Object.entries(
    result.unbridged.commands,
  )
    .map(([command, count]) => `${command} ${count}`)
    .join(', ')}), a Slack event ${result.inboundRequests.dynamoRequestsPerMessage} (${Object.entries(result.inboundRequests.commands)
    .map(([command, count]) => `${command} ${count}`)
    .join(
      ', ',
    )}): the extra write is the \`clientMessageId\` reservation that makes a platform's redelivery find the first message instead of writing a second.

**Rooms without a bridge pay nothing for bridges.** ${result.unbridged.messages} \`POST /messages\` in a room without a bridge, in a project that has one: ${result.unbridged.dynamoRequestsPerMessage} DynamoDB requests and ${result.unbridged.queueRequestsPerMessage} queue or topic requests per message, as for any plain message (the room's \`bridgeCount\` comes with the room read the pipeline makes anyway). The relay's side is in the next section.`,
};

async function measureRelay({ service, log }: Context) {
  const { api, runtime } = service;
  const slackUrl = process.env.SLACK_API_BASE_URL;
  const discordBase = process.env.DISCORD_API_BASE_URL;
  if (!slackUrl || !discordBase) throw new Error('bridge relay bench: the runtime has no platform stand-ins (bench/run.ts starts them)');
  const slack = standInClient(slackUrl);
  const discord = standInClient(new URL(discordBase).origin);
  const matrixServer = await startMatrixStandIn();
  const matrix = standInClient(matrixServer.url);
  try {
    const project = await createProject(api, 'bridge-relay');
    const token = await project.token('author');
    const bridgedRoom = uniqueId('bridged');
    const plainRoom = uniqueId('plain');
    for (const id of [bridgedRoom, plainRoom]) await api.expect(201, '/rooms', { token, body: { id, type: 'group' } });
    const targets = { slack: 'CRELAY0001', discord: '112233445566778899', matrix: '!relay:bench.example' };
    await slack.expect(targets.slack, 'xoxb-relay');
    await discord.expect(targets.discord, 'relay-webhook-token');
    await matrix.expect(targets.matrix, 'relay-as-token');
    const create = (body: Record<string, unknown>) =>
      api.expect(201, '/admin/bridges', { apiKey: project.apiKey, body: { roomId: bridgedRoom, ...body } });
    await create({ platform: 'slack', signingSecret: 'relay-signing-secret', botToken: 'xoxb-relay', channelId: targets.slack });
    await create({
      platform: 'discord',
      publicKey: discordKeyPair().publicKeyHex,
      webhookUrl: `https://discord.com/api/webhooks/${targets.discord}/relay-webhook-token`,
    });
    await create({
      platform: 'matrix',
      hsToken: 'relay-hs-token',
      asToken: 'relay-as-token',
      homeserverUrl: matrix.url,
      matrixRoomId: targets.matrix,
    });
    runtime.startConsumers();

    const sentAt = new Map<string, number>();
    const send = async (roomId: string, content: string) => {
      await api.expect(201, '/messages', { token, body: { roomId, content } });
      sentAt.set(content, Date.now());
    };
    const arrivals = async (client: typeof slack, target: string, count: number) => {
      const posts = await client.waitForPosts(target, count, { timeoutMs: 60_000 });
      const contentOf = (post: (typeof posts)[number]) => String(post.body.text ?? post.body.content ?? post.body.body ?? '');
      return posts.flatMap((post) => {
        const content = [...sentAt.keys()].find((sent) => contentOf(post).includes(sent));
        return content === undefined ? [] : [post.receivedAt - (sentAt.get(content) as number)];
      });
    };

    // Warm-up: the relay's module, the platform clients' connections.
    for (let index = 0; index < 10; index++) await send(bridgedRoom, `warm-${index}-${uniqueId('m')}`);
    await Promise.all([arrivals(slack, targets.slack, 10), arrivals(discord, targets.discord, 10), arrivals(matrix, targets.matrix, 10)]);
    sentAt.clear();
    await sleep(500);

    const before = runtime.stats().lambda.byFunction.BridgeRelay ?? 0;
    for (let index = 0; index < UNBRIDGED_MESSAGES; index++) await send(plainRoom, `plain-${index}`);
    // Time for any event of those messages to reach the relay, were its filter to let them through.
    await sleep(3000);
    const afterPlain = runtime.stats().lambda.byFunction.BridgeRelay ?? 0;
    sentAt.clear();

    for (let index = 0; index < RELAY_MESSAGES; index++) {
      const started = performance.now();
      await send(bridgedRoom, `relay-${index}-${uniqueId('m')}`);
      await sleep(Math.max(0, 1000 / RELAY_RATE - (performance.now() - started)));
    }
    const [toSlack, toDiscord, toMatrix] = await Promise.all([
      arrivals(slack, targets.slack, 10 + RELAY_MESSAGES),
      arrivals(discord, targets.discord, 10 + RELAY_MESSAGES),
      arrivals(matrix, targets.matrix, 10 + RELAY_MESSAGES),
    ]);
    const afterBridged = runtime.stats().lambda.byFunction.BridgeRelay ?? 0;
    const result = {
      messages: RELAY_MESSAGES,
      ratePerSecond: RELAY_RATE,
      slack: { arrived: toSlack.length, ...latencySummary(toSlack) },
      discord: { arrived: toDiscord.length, ...latencySummary(toDiscord) },
      matrix: { arrived: toMatrix.length, ...latencySummary(toMatrix) },
      relayInvocations: { unbridgedMessages: UNBRIDGED_MESSAGES, forUnbridged: afterPlain - before, forBridged: afterBridged - afterPlain },
    };
    log(
      `  message → Slack p50 ${result.slack.p50} / p99 ${result.slack.p99} ms, Discord ${result.discord.p50} / ${result.discord.p99} ms, Matrix ${result.matrix.p50} / ${result.matrix.p99} ms; relay invocations for ${UNBRIDGED_MESSAGES} unbridged messages: ${result.relayInvocations.forUnbridged}`,
    );
    return result;
  } finally {
    await matrixServer.close();
  }
}

type Relay = Awaited<ReturnType<typeof measureRelay>>;

export const bridgeRelay: Bench<Relay> = {
  id: 'bridgeRelay',
  name: 'Bridge relay',
  needs: 'service',
  run: measureRelay,
  goals: (result) => [
    ...(['slack', 'discord', 'matrix'] as const).map((platform) => ({
      id: `bridges.relay.${platform}`,
      name: `Room message → ${platform[0]?.toUpperCase()}${platform.slice(1)} stand-in, p99`,
      target: `≤ ${BRIDGE_GOALS.relayP99Ms / 1000} s, all arrived`,
      measured: `${fmt(result[platform].p99)} ms (p50 ${fmt(result[platform].p50)} ms), ${result[platform].arrived} of ${result.messages}`,
      pass: result[platform].p99 <= BRIDGE_GOALS.relayP99Ms && result[platform].arrived === result.messages,
    })),
    {
      id: 'bridges.relay.unbridged',
      name: 'Relay invocations for messages of a room without a bridge',
      target: '0',
      measured: `${result.relayInvocations.forUnbridged} for ${result.relayInvocations.unbridgedMessages} messages`,
      pass: result.relayInvocations.forUnbridged === 0,
    },
  ],
  section: (result) => {
    const row = (label: string, figures: Relay['slack']) =>
      `| ${label} | ${figures.arrived} of ${result.messages} | ${fmt(figures.p50)} | ${fmt(figures.p99)} | ${fmt(figures.max)} |`;
    return `## Bridges: the relay to Slack, Discord and Matrix

${result.messages} messages are sent with \`POST /messages\`, one every ${1000 / result.ratePerSecond} ms, into a room with a Slack, a Discord (webhook) and a Matrix bridge, whose platforms are local stand-ins speaking their APIs (\`chat.postMessage\`, webhook execute, the client-server send). Each message's \`message.created\` travels the table stream, the publisher and the event topic to the \`BridgeRelay\` subscriber's queue, whose consumer posts to the three platforms. Latency runs from the sender's 201 to the stand-in's receipt.

| Platform | Arrived | p50 ms | p99 ms | max ms |
| --- | --- | --- | --- | --- |
${row('Slack', result.slack)}
${row('Discord', result.discord)}
${row('Matrix', result.matrix)}

**The filter policy keeps unbridged rooms away from the relay.** The relay's subscription takes \`{ "type": ["message.created"], "bridged": ["true"] }\` (test/infra/chat-stack/bridges.test.ts asserts it on the template; the local runtime subscribes with the same policy). ${result.relayInvocations.unbridgedMessages} messages in a room without a bridge caused ${result.relayInvocations.forUnbridged} relay invocations; the ${result.messages} bridged ones ${result.relayInvocations.forBridged} (batches of up to 10).`;
  },
};
