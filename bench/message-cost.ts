/**
 * Figure 1: what one message costs in DynamoDB requests, capacity units and SQS requests, counted
 * by SDK middleware on the handlers' own clients while messages go through the real HTTP route.
 * Messages are sent one at a time, so every request seen between two marks belongs to one message.
 */
import type { Api, ApiResult, BenchProject } from './client';
import { createProject, MESSAGE_CONTENT, uniqueId } from './client';
import type { Recorder } from './instrument';
import { histogram, mean, median, percentile, round, sum } from './stats';

export interface CostSample {
  readonly requests: number;
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly byCommand: Record<string, number>;
  readonly sqsRequests: number;
  readonly sqsEntries: number;
  readonly latencyMs: number;
  readonly dynamoMs: number;
  readonly sqsMs: number;
  readonly computed: readonly string[];
}

export interface CostScenario {
  readonly id: string;
  readonly label: string;
  /** What one sample is: a message (one request) or an import row (requests carry many rows). */
  readonly unit: 'message' | 'import row';
  /** Steady-state scenarios are judged against the goal; one-off ones (cold caches) are shown for context. */
  readonly steadyState: boolean;
  readonly samples: number;
  readonly requests: { readonly mean: number; readonly median: number; readonly max: number; readonly histogram: [number, number][] };
  readonly writeUnits: { readonly mean: number; readonly median: number; readonly max: number };
  readonly readUnits: { readonly mean: number; readonly median: number };
  /** Mean requests per sample, by DynamoDB command. */
  readonly byCommand: Record<string, number>;
  /** The command sequence of the most common per-sample pattern (message scenarios only). */
  readonly typicalCommands: readonly string[];
  readonly sqsRequests: number;
  readonly sqsEntries: number;
  /** Client-side latency of the sequential requests (per HTTP request, also for import batches). */
  readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p99: number };
  /** Mean time inside DynamoDB and SQS SDK calls per HTTP request. */
  readonly dynamoMs: number;
  readonly sqsMs: number;
  /** Commands whose capacity was computed from item sizes because DynamoDB Local reported none. */
  readonly computedCapacity: readonly string[];
  readonly note: string;
}

export interface MessageCostResult {
  readonly scenarios: CostScenario[];
  readonly contentLength: number;
  /** Proof that the middleware sits on the handlers' client: requests counted for one warm-up message. */
  readonly instrumentationCheck: { readonly dynamoRequests: number; readonly sqsRequests: number };
}

const shortName = (command: string) => command.replace(/Command$/, '');

async function sample(
  recorder: Recorder,
  rows: number,
  call: () => Promise<ApiResult>,
): Promise<{ sample: CostSample; commands: string[] }> {
  const mark = recorder.mark();
  const result = await call();
  const { dynamo, sqs } = recorder.since(mark);
  const byCommand: Record<string, number> = {};
  for (const c of dynamo) byCommand[shortName(c.command)] = (byCommand[shortName(c.command)] ?? 0) + 1 / rows;
  return {
    sample: {
      requests: dynamo.length / rows,
      writeUnits: sum(dynamo.map((c) => c.writeUnits)) / rows,
      readUnits: sum(dynamo.map((c) => c.readUnits)) / rows,
      byCommand,
      sqsRequests: sqs.length / rows,
      sqsEntries: sum(sqs.map((c) => c.entries)) / rows,
      latencyMs: result.ms,
      dynamoMs: sum(dynamo.map((c) => c.ms)),
      sqsMs: sum(sqs.map((c) => c.ms)),
      computed: [...new Set(dynamo.filter((c) => c.capacity === 'computed').map((c) => shortName(c.command)))],
    },
    commands: dynamo.map((c) => shortName(c.command)),
  };
}

function summarize(
  meta: Pick<CostScenario, 'id' | 'label' | 'unit' | 'steadyState' | 'note'>,
  runs: { sample: CostSample; commands: string[] }[],
): CostScenario {
  const samples = runs.map((r) => r.sample);
  const requests = samples.map((s) => s.requests);
  const writes = samples.map((s) => s.writeUnits);
  const commandNames = [...new Set(samples.flatMap((s) => Object.keys(s.byCommand)))].sort();
  const patterns = new Map<string, { count: number; commands: string[] }>();
  for (const run of runs) {
    const key = run.commands.join(',');
    const entry = patterns.get(key) ?? { count: 0, commands: run.commands };
    entry.count++;
    patterns.set(key, entry);
  }
  const typical = [...patterns.values()].sort((a, b) => b.count - a.count)[0]?.commands ?? [];
  const latencies = samples.map((s) => s.latencyMs);
  return {
    ...meta,
    samples: samples.length,
    requests: { mean: round(mean(requests), 3), median: median(requests), max: Math.max(...requests), histogram: histogram(requests) },
    writeUnits: { mean: round(mean(writes), 3), median: median(writes), max: Math.max(...writes) },
    readUnits: { mean: round(mean(samples.map((s) => s.readUnits)), 3), median: median(samples.map((s) => s.readUnits)) },
    byCommand: Object.fromEntries(commandNames.map((name) => [name, round(mean(samples.map((s) => s.byCommand[name] ?? 0)), 3)])),
    typicalCommands: meta.unit === 'message' ? typical : [],
    sqsRequests: round(mean(samples.map((s) => s.sqsRequests)), 3),
    sqsEntries: round(mean(samples.map((s) => s.sqsEntries)), 3),
    latencyMs: { mean: round(mean(latencies)), p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)) },
    dynamoMs: round(mean(samples.map((s) => s.dynamoMs))),
    sqsMs: round(mean(samples.map((s) => s.sqsMs))),
    computedCapacity: [...new Set(samples.flatMap((s) => s.computed))],
  };
}

export interface MessageCostOptions {
  readonly api: Api;
  readonly recorder: Recorder;
  /** Empties this instance's project cache, as a cold start would (`forgetProject` of `#shared/auth`). */
  readonly forgetProject: (projectId: string) => void;
  /** Messages per steady-state scenario. */
  readonly messages: number;
  readonly warmup: number;
  /** Distinct users / projects for the first-message scenarios. */
  readonly firstMessages: number;
  readonly log: (line: string) => void;
}

export async function measureMessageCost(options: MessageCostOptions): Promise<MessageCostResult> {
  const { api, recorder, messages, warmup, log } = options;
  const project: BenchProject = await createProject(api, 'bench message cost');
  const alice = await project.token('alice');
  const groupRoom = uniqueId('room');
  await api.expect(201, '/rooms', { token: alice, body: { id: groupRoom, type: 'group', members: ['bob', 'carol'] } });
  const send = (body: Record<string, unknown>, token = alice) =>
    api.expect([201], '/messages', { token, body: { roomId: groupRoom, ...body } });

  // Warm-up: loads the handler, fills the project, room/membership and block-list caches.
  const check = await sample(recorder, 1, () => send({ content: MESSAGE_CONTENT }));
  if (check.sample.requests === 0) {
    throw new Error('The counting middleware saw no DynamoDB request: it is not attached to the client the handlers use');
  }
  const first = await send({ content: MESSAGE_CONTENT });
  const parentId = (first.body as { id: number }).id;
  for (let i = 0; i < warmup; i++) await send({ content: MESSAGE_CONTENT });

  const scenarios: CostScenario[] = [];
  const runMessages = async (
    meta: Pick<CostScenario, 'id' | 'label' | 'note'>,
    body: (i: number) => Record<string, unknown>,
    count = messages,
  ) => {
    for (let i = 0; i < Math.min(warmup, 5); i++) await send(body(-1 - i));
    const runs = [];
    for (let i = 0; i < count; i++) runs.push(await sample(recorder, 1, () => send(body(i))));
    scenarios.push(summarize({ ...meta, unit: 'message', steadyState: true }, runs));
    log(`  ${meta.label}: ${scenarios.at(-1)?.requests.median} requests, ${scenarios.at(-1)?.writeUnits.mean} WU`);
  };

  const runTag = uniqueId('c');
  await runMessages(
    { id: 'plain', label: 'Plain message', note: 'POST /messages, member of a group room, no receivers connected' },
    () => ({ content: MESSAGE_CONTENT }),
  );
  await runMessages(
    { id: 'clientMessageId', label: 'With clientMessageId', note: 'a fresh clientMessageId on every message, the idempotent send' },
    (i) => ({ content: MESSAGE_CONTENT, clientMessageId: `${runTag}-${i}` }),
  );
  await runMessages({ id: 'reply', label: 'Reply (parent_id)', note: 'parent_id of an earlier message in the room' }, () => ({
    content: MESSAGE_CONTENT,
    parent_id: parentId,
  }));
  await runMessages(
    { id: 'mention', label: 'With an @mention', note: 'mentions one room member, @bob, which adds a `mention` event' },
    () => ({ content: `Thanks @bob, ${MESSAGE_CONTENT}` }),
  );

  // Batch import: per-row cost of POST /admin/messages/import/batch with the project API key.
  const importRows = Math.min(100, messages);
  const importBatches = Math.max(1, Math.round(messages / importRows));
  for (const withId of [false, true]) {
    const rows = (batch: number) =>
      Array.from({ length: importRows }, (_, i) => ({
        roomId: groupRoom,
        userId: 'dave',
        content: MESSAGE_CONTENT,
        ...(withId ? { clientMessageId: `${runTag}-import-${batch}-${i}` } : {}),
      }));
    const importBatch = (batch: number) =>
      api.expect(200, '/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows(batch) } });
    await importBatch(-1);
    const runs = [];
    for (let batch = 0; batch < importBatches; batch++) runs.push(await sample(recorder, importRows, () => importBatch(batch)));
    scenarios.push(
      summarize(
        {
          id: withId ? 'importRowClientMessageId' : 'importRow',
          label: withId ? 'Batch import row with clientMessageId' : 'Batch import row',
          unit: 'import row',
          steadyState: true,
          note: `${importBatches} × POST /admin/messages/import/batch of ${importRows} rows with the API key, per row`,
        },
        runs,
      ),
    );
    log(`  ${scenarios.at(-1)?.label}: ${scenarios.at(-1)?.requests.mean} requests, ${scenarios.at(-1)?.writeUnits.mean} WU per row`);
  }

  // First message of a new user in a public room, in a warm instance: reads and adds the membership.
  const publicRoom = uniqueId('public');
  await api.expect(201, '/rooms', { token: alice, body: { id: publicRoom, type: 'public', members: [] } });
  await api.expect(201, '/messages', { token: alice, body: { roomId: publicRoom, content: MESSAGE_CONTENT } });
  const newcomers = [];
  for (let i = 0; i < options.firstMessages; i++) newcomers.push(await project.token(uniqueId('newcomer')));
  const newcomerRuns = [];
  for (const token of newcomers) {
    newcomerRuns.push(
      await sample(recorder, 1, () => api.expect(201, '/messages', { token, body: { roomId: publicRoom, content: MESSAGE_CONTENT } })),
    );
  }
  scenarios.push(
    summarize(
      {
        id: 'firstOfUserWarm',
        label: "User's first message (warm instance)",
        unit: 'message',
        steadyState: false,
        note: 'a new user posts to a public room: membership read and self-join; once per user and room',
      },
      newcomerRuns,
    ),
  );

  // First message in a cold instance: every per-instance cache empty (fresh project, project cache dropped).
  const coldRuns = [];
  for (let i = 0; i < options.firstMessages; i++) {
    const fresh = await createProject(api, `bench cold ${i}`);
    const token = await fresh.token('erin');
    const room = uniqueId('room');
    await api.expect(201, '/rooms', { token, body: { id: room, type: 'group', members: ['frank'] } });
    options.forgetProject(fresh.projectId);
    coldRuns.push(
      await sample(recorder, 1, () => api.expect(201, '/messages', { token, body: { roomId: room, content: MESSAGE_CONTENT } })),
    );
  }
  scenarios.push(
    summarize(
      {
        id: 'firstOfUserCold',
        label: 'First message in a cold instance',
        unit: 'message',
        steadyState: false,
        note: 'empty caches: project, room + membership and block list are read once; per instance',
      },
      coldRuns,
    ),
  );

  return {
    scenarios,
    contentLength: MESSAGE_CONTENT.length,
    instrumentationCheck: { dynamoRequests: check.sample.requests, sqsRequests: check.sample.sqsRequests },
  };
}
