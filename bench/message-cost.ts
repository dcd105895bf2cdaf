/**
 * Section 1: what one message costs in DynamoDB requests, capacity units and SQS/SNS requests,
 * counted by SDK middleware on the handlers' own clients while messages go through the real HTTP
 * route. Messages are sent one at a time, so every request seen between two marks belongs to one
 * message.
 */
import { type Bench, type Context, fmt, fmtUnits, GOALS, type Goal, mark, table } from './harness';
import { type Recorder, recording } from './instrument';
import { createProject, histogram, MESSAGE_CONTENT, mean, median, round, sum, uniqueId } from './util';

/** One call to the service, with what the counters saw during it, per row (an import request carries many). */
async function sample(recorder: Recorder, rows: number, call: () => Promise<unknown>) {
  const start = recorder.mark();
  await call();
  const { dynamo, sqs } = recorder.since(start);
  const perRow = (values: number[]) => sum(values) / rows;
  const byCommand: Record<string, number> = {};
  for (const c of dynamo) byCommand[c.command] = (byCommand[c.command] ?? 0) + 1 / rows;
  return {
    requests: dynamo.length / rows,
    writeUnits: perRow(dynamo.map((c) => c.writeUnits)),
    readUnits: perRow(dynamo.map((c) => c.readUnits)),
    byCommand,
    sqsRequests: sqs.length / rows,
    sqsEntries: perRow(sqs.map((c) => c.entries)),
    computed: dynamo.filter((c) => c.capacity === 'computed').map((c) => c.command),
    commands: dynamo.map((c) => c.command),
  };
}

type Sample = Awaited<ReturnType<typeof sample>>;

/**
 * `unit`: what one sample is, a message or an import row; `steadyState`: judged against the goal
 * (one-off scenarios, with cold caches, are shown for context).
 */
type Meta = { id: string; label: string; note: string; unit: 'message' | 'import row'; steadyState: boolean };

function summarize(meta: Meta, samples: readonly Sample[]) {
  const of = (pick: (s: Sample) => number) => samples.map(pick);
  const [requests, writes, reads] = [of((s) => s.requests), of((s) => s.writeUnits), of((s) => s.readUnits)];
  const patterns = new Map<string, { count: number; commands: readonly string[] }>();
  for (const { commands } of samples) {
    const entry = patterns.get(commands.join(',')) ?? { count: 0, commands };
    patterns.set(commands.join(','), { ...entry, count: entry.count + 1 });
  }
  const commandNames = [...new Set(samples.flatMap((s) => Object.keys(s.byCommand)))].sort();
  return {
    ...meta,
    samples: samples.length,
    requests: { mean: round(mean(requests), 3), median: median(requests), max: Math.max(...requests), histogram: histogram(requests) },
    writeUnits: { mean: round(mean(writes), 3), median: median(writes), max: Math.max(...writes) },
    readUnits: { mean: round(mean(reads), 3), median: median(reads) },
    /** Mean requests per sample, by DynamoDB command. */
    byCommand: Object.fromEntries(commandNames.map((name) => [name, round(mean(of((s) => s.byCommand[name] ?? 0)), 3)])),
    /** The command sequence of the most common per-sample pattern (message scenarios only). */
    typicalCommands: meta.unit === 'message' ? ([...patterns.values()].sort((a, b) => b.count - a.count)[0]?.commands ?? []) : [],
    sqsRequests: round(mean(of((s) => s.sqsRequests)), 3),
    sqsEntries: round(mean(of((s) => s.sqsEntries)), 3),
    /** Commands whose capacity was computed from item sizes because DynamoDB Local reported none. */
    computedCapacity: [...new Set(samples.flatMap((s) => s.computed))],
  };
}

type Scenario = ReturnType<typeof summarize>;

async function measure({ service, settings, log }: Context, recorder: Recorder) {
  const { api } = service;
  const { messages, warmupMessages: warmup } = settings;
  const project = await createProject(api, 'bench message cost');
  const alice = await project.token('alice');
  const groupRoom = uniqueId('room');
  await api.expect(201, '/rooms', { token: alice, body: { id: groupRoom, type: 'group', members: ['bob', 'carol'] } });
  const post =
    (body: Record<string, unknown>, token = alice, roomId = groupRoom) =>
    () =>
      api.expect(201, '/messages', { token, body: { roomId, ...body } });
  const plain = { content: MESSAGE_CONTENT };

  // Warm-up: loads the handler, fills the project, room/membership and block-list caches.
  const check = await sample(recorder, 1, post(plain));
  if (check.requests === 0)
    throw new Error('The counting middleware saw no DynamoDB request: it is not attached to the client the handlers use');
  const parentId = (await post(plain)()).body.id as number;
  const replyId = (await post({ ...plain, parent_id: parentId })()).body.id as number;
  for (let i = 0; i < warmup; i++) await post(plain)();

  const scenarios: Scenario[] = [];
  const add = (meta: Meta, samples: Sample[]) => {
    scenarios.push(summarize(meta, samples));
    log(`  ${meta.label}: ${scenarios.at(-1)?.requests.mean} requests, ${scenarios.at(-1)?.writeUnits.mean} WU per ${meta.unit}`);
  };
  const runTag = uniqueId('c');
  const steady: [string, string, string, (i: number) => Record<string, unknown>][] = [
    ['plain', 'Plain message', 'POST /messages, member of a group room, no receivers connected', () => plain],
    [
      'clientMessageId',
      'With clientMessageId',
      'a fresh clientMessageId on every message, the idempotent send',
      (i) => ({ ...plain, clientMessageId: `${runTag}-${i}` }),
    ],
    ['reply', 'Reply to a thread root', 'parent_id of an earlier message that is no reply', () => ({ ...plain, parent_id: parentId })],
    [
      'replyToReply',
      'Reply to a reply',
      'parent_id of a reply: the write guessing a thread root is refused with the parent, and a second write places it',
      () => ({ ...plain, parent_id: replyId }),
    ],
    [
      'replyClientMessageId',
      'Reply with clientMessageId',
      'parent_id of a thread root and a fresh clientMessageId, as the SDK sends a reply',
      (i) => ({ ...plain, parent_id: parentId, clientMessageId: `${runTag}-reply-${i}` }),
    ],
    [
      'mention',
      'With an @mention',
      'mentions one room member, @bob, which adds a `mention` event',
      () => ({ content: `Thanks @bob, ${MESSAGE_CONTENT}` }),
    ],
  ];
  for (const [id, label, note, body] of steady) {
    for (let i = 0; i < Math.min(warmup, 5); i++) await post(body(-1 - i))();
    const samples = [];
    for (let i = 0; i < messages; i++) samples.push(await sample(recorder, 1, post(body(i))));
    add({ id, label, note, unit: 'message', steadyState: true }, samples);
  }

  // Batch import: per-row cost of POST /admin/messages/import/batch with the project API key.
  const importRows = Math.min(100, messages);
  const importBatches = Math.max(1, Math.round(messages / importRows));
  for (const withId of [false, true]) {
    const importBatch = (batch: number) => () => {
      const rows = Array.from({ length: importRows }, (_, i) => ({
        ...plain,
        roomId: groupRoom,
        userId: 'dave',
        ...(withId ? { clientMessageId: `${runTag}-import-${batch}-${i}` } : {}),
      }));
      return api.expect(200, '/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });
    };
    await importBatch(-1)();
    const samples = [];
    for (let batch = 0; batch < importBatches; batch++) samples.push(await sample(recorder, importRows, importBatch(batch)));
    const [id, label] = withId ? ['importRowClientMessageId', 'Batch import row with clientMessageId'] : ['importRow', 'Batch import row'];
    const note = `${importBatches} × POST /admin/messages/import/batch of ${importRows} rows with the API key, per row`;
    add({ id, label, note, unit: 'import row', steadyState: true }, samples);
  }

  // First message of a new user in a public room, in a warm instance: reads and adds the membership.
  const publicRoom = uniqueId('public');
  await api.expect(201, '/rooms', { token: alice, body: { id: publicRoom, type: 'public', members: [] } });
  await post(plain, alice, publicRoom)();
  const newcomers = [];
  for (let i = 0; i < settings.firstMessages; i++) newcomers.push(await project.token(uniqueId('newcomer')));
  const warmFirst = [];
  for (const token of newcomers) warmFirst.push(await sample(recorder, 1, post(plain, token, publicRoom)));
  const once = { unit: 'message', steadyState: false } as const;
  const warmNote = 'a new user posts to a public room: membership read and self-join; once per user and room';
  add({ id: 'firstOfUserWarm', label: "User's first message (warm instance)", note: warmNote, ...once }, warmFirst);

  // First message in a cold instance: every per-instance cache empty (fresh project, project cache dropped).
  const coldFirst = [];
  for (let i = 0; i < settings.firstMessages; i++) {
    const fresh = await createProject(api, `bench cold ${i}`);
    const token = await fresh.token('erin');
    const room = uniqueId('room');
    await api.expect(201, '/rooms', { token, body: { id: room, type: 'group', members: ['frank'] } });
    service.forgetProject(fresh.projectId);
    coldFirst.push(await sample(recorder, 1, post(plain, token, room)));
  }
  const coldNote = 'empty caches: project, room + membership and block list are read once; per instance';
  add({ id: 'firstOfUserCold', label: 'First message in a cold instance', note: coldNote, ...once }, coldFirst);
  /** instrumentationCheck: proof that the middleware sits on the handlers' client, the requests counted for one warm-up message. */
  return {
    scenarios,
    contentLength: MESSAGE_CONTENT.length,
    instrumentationCheck: { dynamoRequests: check.requests, sqsRequests: check.sqsRequests },
  };
}

type MessageCost = Awaited<ReturnType<typeof measure>>;

/**
 * A variant written in one transaction (an idempotency key, a reply) trades write units for a round
 * trip: each transaction item bills twice, so the write-unit bar applies to messages written without
 * one. Both bars take the typical message, as a cache refresh is once per instance and interval.
 */
const transactional = (s: Scenario) => (s.byCommand.TransactWriteItems ?? 0) >= 0.5;
const passes = (s: Scenario) =>
  s.requests.median <= GOALS.requestsPerMessage && (transactional(s) || s.writeUnits.median <= GOALS.writeUnitsPerMessage);
const goalText = (s: Scenario) =>
  transactional(s)
    ? `≤ ${GOALS.requestsPerMessage} requests (one transaction: its items bill 2 WU each)`
    : `≤ ${GOALS.requestsPerMessage} requests, ≤ ${GOALS.writeUnitsPerMessage} WU`;

/** Requests of a typical sample by command: the most common sequence, or rounded means for import rows. */
function typicalCounts(scenario: Scenario): Map<string, number> {
  const counts = new Map<string, number>();
  if (scenario.typicalCommands.length) for (const command of scenario.typicalCommands) counts.set(command, (counts.get(command) ?? 0) + 1);
  else for (const [command, count] of Object.entries(scenario.byCommand)) if (Math.round(count) > 0) counts.set(command, Math.round(count));
  return counts;
}

/** What a typical sample sends beyond a typical plain message, by command. */
function extraOverPlain(scenario: Scenario, plain: Scenario | undefined): string {
  if (!plain || scenario.id === plain.id) return '';
  const mine = typicalCounts(scenario);
  const base = typicalCounts(plain);
  return [...new Set([...mine.keys(), ...base.keys()])]
    .sort()
    .map((name) => [name, (mine.get(name) ?? 0) - (base.get(name) ?? 0)] as const)
    .filter(([, delta]) => delta !== 0)
    .map(([name, delta]) => `${delta > 0 ? '+' : '−'}${Math.abs(delta)} ${name}`)
    .join(', ');
}

const commandMix = (s: Scenario) =>
  Object.entries(s.byCommand)
    .filter(([, count]) => count >= 0.005)
    .map(([name, count]) => `${name} ${fmt(count, 2)}`)
    .join(', ');

const extraNote = (s: Scenario, plain: Scenario | undefined, label: string) =>
  extraOverPlain(s, plain) ? `; ${label}: ${extraOverPlain(s, plain)}` : '';

export const messageCost: Bench<MessageCost> = {
  id: 'messageCost',
  name: 'Message cost',
  needs: 'service',
  run: (context) => recording(context.service.clients, (recorder) => measure(context, recorder)),

  goals({ scenarios }) {
    const steady = scenarios.filter((s) => s.steadyState);
    return [
      ...steady.map((s) => ({
        id: `message.${s.id}`,
        name: `Cost per ${s.unit}: ${s.label}`,
        target: goalText(s),
        measured: `${fmtUnits(s.requests.median)} requests, ${fmtUnits(s.writeUnits.median)} WU`,
        pass: passes(s),
      })),
      ...steady
        .filter((s) => s.unit === 'message')
        .map((s) => ({
          id: `queue.${s.id}`,
          name: `Queue and topic requests on the sender's path: ${s.label}`,
          target: String(GOALS.queueRequestsPerMessage),
          measured: fmt(s.sqsRequests, 2),
          pass: s.sqsRequests === GOALS.queueRequestsPerMessage,
        })),
    ];
  },

  misses(missed: readonly Goal[], { scenarios }) {
    const plain = scenarios.find((s) => s.id === 'plain');
    return missed.map((goal) => {
      const s = scenarios.find((x) => `message.${x.id}` === goal.id);
      if (!s) return `- **${goal.name}**: ${goal.measured}.`;
      const sequence = s.unit === 'message' ? `typical sequence ${s.typicalCommands.join(' → ')}` : `per row ${commandMix(s)}`;
      return `- **${goal.name}** (${goal.measured}): ${sequence}${extraNote(s, plain, 'beyond the plain message')}.`;
    });
  },

  section({ scenarios, contentLength, instrumentationCheck }, { settings }) {
    const plain = scenarios.find((s) => s.id === 'plain');
    const computed = [...new Set(scenarios.flatMap((s) => s.computedCapacity))];
    const rows = scenarios.map((s) => [
      `${s.label}${s.steadyState ? '' : ' ¹'}`,
      s.samples,
      fmtUnits(s.requests.median),
      fmt(s.requests.mean, 2),
      fmtUnits(s.writeUnits.mean),
      fmtUnits(s.readUnits.mean),
      `${fmt(s.sqsRequests, 2)} / ${fmt(s.sqsEntries, 2)}`,
      commandMix(s),
      s.steadyState ? mark(passes(s)) : 'one-off',
    ]);
    const sequences = scenarios
      .filter((s) => s.typicalCommands.length)
      .map((s) => `- ${s.label} — ${s.note}: ${s.typicalCommands.join(' → ')}${extraNote(s, plain, 'vs plain')}`);
    const imports = scenarios
      .filter((s) => s.unit === 'import row')
      .map((s) => `- ${s.label} — ${s.note}: ${commandMix(s)}${extraNote(s, plain, 'vs plain message')}`);
    const refreshed = plain?.requests.histogram.filter(([value]) => value !== plain.requests.median) ?? [];
    const refreshNote = !plain
      ? ''
      : refreshed.length
        ? `In the plain run, ${refreshed.map(([value, count]) => `${count} of ${plain.samples} messages made ${value} requests`).join(', ')}: the per-instance caches (room + membership, block list: \`CACHE_TTL_MS\`, 5 s by default; project: 60 s) expired and were read again. That is a cost per instance and interval, not per message, and it is what separates the mean from the typical count.`
        : `Every one of the ${plain.samples} plain messages made exactly ${plain.requests.median} requests: no cache expired during the run.`;
    const queueNote = scenarios.every((s) => s.unit !== 'message' || s.sqsRequests === 0)
      ? 'No SQS or SNS request on the sender\'s path: each message item carries its own domain events (`message.created`, plus `mention` and `moderation.auto_flag` when they apply) to the table stream, and the publisher sends them on from there (see "Domain events").'
      : 'SQS and SNS requests on the sender\'s path are in the "SQS requests / events" column.';
    return `## 1. Cost per message

Each message is sent on its own (\`POST /messages\` over HTTP) after ${settings.warmupMessages} warm-up messages, so every request the counters see between two marks belongs to that message; ${settings.messages} messages per steady-state scenario. Content: ${contentLength} characters. "Typical" is the median per message, with every per-instance cache warm; "mean" also carries any cache refresh that fell into the run. The instrumentation check counted ${instrumentationCheck.dynamoRequests} DynamoDB and ${instrumentationCheck.sqsRequests} SQS request(s) for the first warm-up message, so the middleware sits on the handlers' own clients.

${table(`Scenario | Samples | DynamoDB requests (typical) | Requests (mean) | Write units (mean) | Read units (mean) | SQS requests / events | Requests by command (mean) | Goal ≤ ${GOALS.requestsPerMessage} req, ≤ ${GOALS.writeUnitsPerMessage} WU`, rows)}

¹ Once per user and room, or per instance: shown for context, not judged against the per-message goal.

What each scenario sends, and its typical DynamoDB command sequence per message:

${sequences.join('\n')}

Batch import, per row:

${imports.join('\n')}

${refreshNote} ${queueNote}

Capacity units: ${
      computed.length
        ? `DynamoDB Local returned no \`ConsumedCapacity\` for ${computed.join(', ')}; for those the units were computed from the item sizes by the AWS rules (1 write unit per started KB of each item written, twice that inside a transaction).`
        : 'DynamoDB Local returned `ConsumedCapacity` for every request, so all units are as reported (no size-based estimate was needed).'
    } The counters ask for \`ReturnConsumedCapacity: INDEXES\`, which carries the \`TOTAL\` figure plus its table/GSI split; write units include GSI writes. DynamoDB Local reports 0 read units for a Query or BatchGetItem that finds nothing, where DynamoDB may charge a minimum, so treat read units as a lower bound. Write units are what the goal is about.`;
  },
};
