/**
 * The cost model of the realtime section: dollars per million room messages for rooms of 10, 100
 * and 1,000 members, at a quiet and a busy rate, with and without coalesced delivery, and what a
 * deployed stack costs a month with no traffic at all.
 *
 * Per-message work comes from the run's own counts (bench/realtime/cost.ts: a persisted message at
 * N = 10 and N = 100, one at a time). What the run does not measure is an input, labelled as such
 * in the rendered table: the room of 1,000 (extrapolated from 10 and 100 along the one thing that
 * grows with N, a post per member and the bytes of the connection list), the quiet rate, and the
 * frames per message of a coalesced room (another bench measures that; until it reports, the
 * contract's window gives the default). The idle month is `idleCost` of lib/constructs/idle-cost.ts
 * over the templates the first-deploy checklist's command synthesizes, the same figure
 * docs/operations.md quotes (test/infra/deploy-docs.test.ts), computed in a child process so the
 * local runtime's settings in this process's environment do not reach the synth.
 */
import { readFileSync } from 'node:fs';
import { defaultMemorySizeMb } from '../lib/constructs/chat-function';
import { fmt, table } from './harness';
import type { CostRow } from './realtime/cost';
import { idleConnectionHour, launch, PRICES, round } from './util';

/** The room sizes of the model. */
export const MODEL_ROOMS = [10, 100, 1000] as const;

/** Messages per second in one room: a quiet room (an input) and a busy one (the issue's 20 msg/s). */
export const MODEL_RATES = { quiet: 0.1, busy: 20 } as const;

/** Rooms past this many connections fan out through the realtime queue (REALTIME_FANOUT_QUEUE_THRESHOLD, REALTIME_FANOUT_BATCH_SIZE). */
const FANOUT = { threshold: 200, batchSize: 100, workerBatch: 10, sendBatch: 10 };

/**
 * Coalesced frames per message per recipient at the busy rate when no bench measured it: the local
 * window of 200 ms (`REALTIME_COALESCE_WINDOW_MS`) holds 4 messages at 20 msg/s, so a recipient gets
 * a frame per 4 messages. A parameter, not a measurement.
 */
export const DEFAULT_FRAMES_PER_MESSAGE = 0.25;

/**
 * How often the room's heat refreshes `coalesceUntil` (one UpdateItem): every half hold
 * (`REALTIME_COALESCE_HOLD_SECONDS` 60 s), so once per 30 s of a busy room.
 */
const HEAT_REFRESH_SECONDS = 30;

export interface CoalescingInput {
  /** Frames per message per recipient in a coalesced room at the busy rate. */
  readonly framesPerMessage: number;
  /** Where it came from: a bench's measurement, or the parameter. */
  readonly source: string;
  readonly measured: boolean;
}

/**
 * The coalesced frames per message: `BENCH_COALESCED_FRAMES_PER_MESSAGE` if set, else a bench
 * result that carries `coalesced.framesPerMessage` (the `hotRooms` bench, bench/hot-rooms.ts, at 20 msg/s) in
 * `results` (the benches of bench/results/latest.json, the last full run: this section is computed
 * while its own run's other results are still private to their benches), else the parameter.
 */
export function coalescingInput(
  results: Readonly<Record<string, unknown>>,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): CoalescingInput {
  const given = Number(env.BENCH_COALESCED_FRAMES_PER_MESSAGE);
  if (given > 0) return { framesPerMessage: given, source: '`BENCH_COALESCED_FRAMES_PER_MESSAGE` (given for this run)', measured: false };
  for (const [id, result] of Object.entries(results)) {
    const measured = (result as { coalesced?: { framesPerMessage?: unknown } } | null | undefined)?.coalesced?.framesPerMessage;
    if (typeof measured === 'number' && measured > 0)
      return { framesPerMessage: measured, source: `measured at 20 msg/s by the \`${id}\` bench (${where})`, measured: true };
  }
  return {
    framesPerMessage: DEFAULT_FRAMES_PER_MESSAGE,
    source: `**parameter**: no bench result carries \`coalesced.framesPerMessage\` (${where}); a 200 ms window at 20 msg/s holds 4 messages`,
    measured: false,
  };
}

/** The benches of the last full run (bench/results/latest.json), or none. */
export function lastRunResults(path: string): { results: Record<string, unknown>; where: string } {
  try {
    const report = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown> & { generatedAt?: string };
    return { results: report, where: `bench/results/latest.json of ${report.generatedAt ?? 'an earlier run'}` };
  } catch {
    return { results: {}, where: 'no bench/results/latest.json' };
  }
}

/** One message's work in a room of `n`, with where each figure came from. */
interface Work {
  readonly apiGatewayMessages: number;
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly sqsRequests: number;
  readonly snsPublishes: number;
  readonly lambdaInvocations: number;
  readonly lambdaGbSeconds: number;
}

/**
 * Per-message work at any N from the two measured rooms: what does not grow with N (writes, the
 * event publisher and subscribers, the `$default` run) is the N = 10 row less its posts; posts,
 * handler time per post and list read units grow linearly between the two rows; past the queue
 * threshold the posts move to fan-out jobs (SQS sends, receives and deletes, worker invocations).
 */
function workModel(rows: readonly CostRow[]) {
  const row = (workload: 'message' | 'client', n: number) => rows.find((r) => r.workload === workload && r.receivers === n);
  const [small, large, clientSmall, clientLarge] = [row('message', 10), row('message', 100), row('client', 10), row('client', 100)];
  if (!small || !large) return undefined;
  // What a post and a member of the list cost comes from the `client-*` rows where there are both:
  // their frame is nothing but the list read and the posts, so the slope is not mixed with the
  // message's stream consumers, whose share of a one-at-a-time count varies from run to run.
  const [from, to] = clientSmall && clientLarge ? [clientSmall, clientLarge] : [small, large];
  const slope = (of: (row: CostRow) => number) => Math.max(0, (of(to) - of(from)) / (to.receivers - from.receivers));
  const gbsPerPost = slope((r) => r.lambdaGbSeconds);
  const ruPerMember = slope((r) => r.dynamo.readUnits);
  const postsFixed = small.postToConnection - small.receivers; // the sender's ack
  const base = {
    writeUnits: small.dynamo.writeUnits,
    readUnits: Math.max(0, small.dynamo.readUnits - ruPerMember * small.receivers),
    sqsRequests: small.sqs.handlers + small.sqs.consumers,
    snsPublishes: small.snsPublishes,
    lambdaInvocations: small.lambdaInvocations,
    lambdaGbSeconds: Math.max(0, small.lambdaGbSeconds - gbsPerPost * small.receivers),
  };
  /** `posts`: frames posted per message to the room's members (N without coalescing). */
  const at = (n: number, coalesced?: CoalescingInput): Work => {
    const frames = coalesced ? coalesced.framesPerMessage : 1;
    const posts = (n - 1) * frames;
    // Queued fan-out: a job per batch of members, sent 10 to a request, received and deleted in batches of 10.
    const queued = n - 1 > FANOUT.threshold;
    const jobs = queued ? Math.ceil((n - 1) / FANOUT.batchSize) * frames : 0;
    const queueRequests = queued ? Math.ceil(jobs / FANOUT.sendBatch) + 2 * Math.ceil(jobs / FANOUT.workerBatch) : 0;
    const workerInvocations = queued ? Math.ceil(jobs / FANOUT.workerBatch) : 0;
    const listReads = coalesced ? coalesced.framesPerMessage : 1;
    const heatWrites = coalesced ? 1 / (HEAT_REFRESH_SECONDS * MODEL_RATES.busy) : 0;
    return {
      // The inbound frame, the sender's ack, and a post per member per frame.
      apiGatewayMessages: 1 + postsFixed + posts,
      writeUnits: base.writeUnits + heatWrites,
      // The connection list is read once per message on the sender's path, or once per window by `RoomDelivery`.
      readUnits: base.readUnits + ruPerMember * n * listReads,
      sqsRequests: base.sqsRequests + queueRequests,
      snsPublishes: base.snsPublishes,
      // Coalesced: `RoomDelivery` runs once per window, and the sender's `$default` no longer posts.
      lambdaInvocations: base.lambdaInvocations + workerInvocations + (coalesced ? coalesced.framesPerMessage : 0),
      lambdaGbSeconds: base.lambdaGbSeconds + gbsPerPost * posts,
    };
  };
  return { at, measuredRooms: [small.receivers, large.receivers], gbsPerPost, ruPerMember };
}

/** Dollars per million messages, by line. */
function price(work: Work, n: number, rate: number) {
  const hoursPerMillion = 1e6 / rate / 3600;
  return {
    'API Gateway messages': work.apiGatewayMessages * PRICES.apiGatewayWebSocketPerMillionMessages,
    // Every member connected while the million messages are written: connection minutes and the SDK's keep-alives.
    'Connection minutes + keep-alives': n * hoursPerMillion * idleConnectionHour(0).total,
    Lambda: work.lambdaInvocations * PRICES.lambdaPerMillionInvocations + work.lambdaGbSeconds * 1e6 * PRICES.lambdaPerGbSecondArm,
    DynamoDB: work.writeUnits * PRICES.dynamoPerMillionWriteUnits + work.readUnits * PRICES.dynamoPerMillionReadUnits,
    'SQS + SNS': work.sqsRequests * PRICES.sqsPerMillionRequests + work.snsPublishes * PRICES.snsPerMillionPublishes,
  };
}

export interface CostModelRow {
  readonly receivers: number;
  readonly rate: keyof typeof MODEL_RATES;
  readonly coalesced: boolean;
  readonly work: Work;
  readonly dollars: Record<string, number>;
  readonly total: number;
  /** Whether its work was counted in this run (10, 100) or extrapolated (1,000). */
  readonly measured: boolean;
}

export function costModel(rows: readonly CostRow[], coalescing: CoalescingInput) {
  const model = workModel(rows);
  if (!model) return undefined;
  const out: CostModelRow[] = [];
  for (const n of MODEL_ROOMS) {
    for (const rate of ['quiet', 'busy'] as const) {
      // Coalescing starts past REALTIME_COALESCE_THRESHOLD_PER_SECOND (5): a quiet room is never coalesced.
      for (const coalesced of rate === 'busy' ? [false, true] : [false]) {
        const work = model.at(n, coalesced ? coalescing : undefined);
        const dollars = price(work, n, MODEL_RATES[rate]);
        const total = Object.values(dollars).reduce((all, d) => all + d, 0);
        out.push({ receivers: n, rate, coalesced, work, dollars, total: round(total, 2), measured: model.measuredRooms.includes(n) });
      }
    }
  }
  return { rows: out, coalescing, gbsPerPost: model.gbsPerPost, ruPerMember: model.ruPerMember };
}

export type CostModel = NonNullable<ReturnType<typeof costModel>>;

/** The busy room of 100 with coalescing: the issue's ≤ $30 per million messages. */
export const busyHundredCoalesced = (model: CostModel | undefined) =>
  model?.rows.find((r) => r.receivers === 100 && r.rate === 'busy' && r.coalesced);

/** What the deployed stack costs a month with no traffic: `idleCost` over the checklist's templates, synthesized in a child. */
export async function idleMonth(env: NodeJS.ProcessEnv) {
  const script = `
    const { idleCost } = await import('./lib/constructs/idle-cost.ts');
    const { synthesize } = await import('./test/support/chat-stack/synthesized.ts');
    const { deployChecklist } = await import('./test/support/deploy-checklist.ts');
    const synth = synthesize({ nagChecks: false }, deployChecklist().context);
    const templates = [synth.root.toJSON(), ...[...synth.views.values()].map((view) => view.template.toJSON())];
    console.log('IDLE ' + JSON.stringify(idleCost(templates)));
  `;
  const child = launch(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env });
  const code = await child.exited;
  const line = child
    .output()
    .split('\n')
    .find((l) => l.startsWith('IDLE '));
  if (code !== 0 || !line) throw new Error(`the idle-cost synth exited ${code}: ${child.output().slice(-600)}`);
  return JSON.parse(line.slice(5)) as import('../lib/constructs/idle-cost').IdleCost;
}

export type IdleMonth = Awaited<ReturnType<typeof idleMonth>>;

const money = (dollars: number) => (dollars >= 10 ? `$${fmt(dollars, 2)}` : `$${dollars.toPrecision(2)}`);

/** The model's Markdown: the inputs, the table, and the idle month. */
export function renderCostModel(model: CostModel | undefined, idle: IdleMonth | { error: string } | undefined): string {
  const idleText = !idle
    ? 'Not computed in this run.'
    : 'error' in idle
      ? `Not computed: ${idle.error}`
      : `**$${idle.monthlyDollars.toFixed(2)} a month**: CloudWatch alarms $${idle.alarms.monthlyDollars.toFixed(2)} (${idle.alarms.alarms} alarms reading ${idle.alarms.alarmMetrics} metrics, ${idle.alarms.compositeAlarms} composite), ${idle.dashboards} dashboard${idle.dashboards === 1 ? '' : 's'} $${(idle.dashboards * 3).toFixed(2)}, ${idle.secrets} secrets $${(idle.secrets * 0.4).toFixed(2)}, ${idle.kmsKeys} KMS keys $${idle.kmsKeys.toFixed(2)}, and Lambda's long polls of ${idle.polledQueues} empty queues $${idle.sqsDollars.toFixed(2)}; \`idleCost\` of \`lib/constructs/idle-cost.ts\` over the templates the first-deploy command synthesizes (the figure docs/operations.md quotes), us-east-1 list prices before free tiers. Everything else bills by request.`;
  if (!model)
    return `### Cost per million messages\n\nNot computed: the run has no message cost rows at N = 10 and N = 100.\n\nIdle, no traffic: ${idleText}\n`;
  const lines = Object.keys(model.rows[0]?.dollars ?? {});
  const body = model.rows.map((row) => [
    `${row.receivers.toLocaleString('en-US')}${row.measured ? '' : ' (extrapolated)'}`,
    `${row.rate} (${MODEL_RATES[row.rate]} msg/s)`,
    row.coalesced ? `yes (${fmt(model.coalescing.framesPerMessage, 3)} frames/message)` : 'no',
    fmt(row.work.apiGatewayMessages, 1),
    `${fmt(row.work.lambdaInvocations, 2)} / ${fmt(row.work.lambdaGbSeconds * 1000, 2)}`,
    `${fmt(row.work.writeUnits, 2)} / ${fmt(row.work.readUnits, 2)}`,
    `${fmt(row.work.sqsRequests, 2)} / ${fmt(row.work.snsPublishes, 2)}`,
    ...lines.map((line) => money(row.dollars[line] ?? 0)),
    `**${money(row.total)}**`,
  ]);
  const inputs = [
    `Per message, from this run's counts (the table above, a persisted message one at a time at N = 10): DynamoDB write and read units, SQS and SNS requests, Lambda invocations and their wall time at ${defaultMemorySizeMb} MB. The work that grows with N is linear in it, with slopes from the \`client-*\` rows at 10 and 100 (that frame is only the list read and the posts): a \`PostToConnection\` per member (${fmt(model.gbsPerPost * 1e6, 1)} µGB-s of handler time each) and the connection list's read units (${fmt(model.ruPerMember * 1000, 2)} RU per thousand members).`,
    `**Input, not measured**: the room of 1,000 is extrapolated along those slopes, and past \`REALTIME_FANOUT_QUEUE_THRESHOLD\` (${FANOUT.threshold}) its posts go out as fan-out jobs of ${FANOUT.batchSize} (one SQS send per ${FANOUT.sendBatch} jobs, a receive and a delete per worker batch of ${FANOUT.workerBatch}, a \`RealtimeWorker\` invocation per batch). The queued fan-out leg above measures delivery at 5,000 but not its cost.`,
    `**Input, not measured**: the quiet rate, ${MODEL_RATES.quiet} msg/s (a message every ${fmt(1 / MODEL_RATES.quiet, 0)} s); the busy rate is the issue's ${MODEL_RATES.busy} msg/s. Every member is taken to be connected the whole time: connection minutes and the SDK's keep-alives (per connected member-hour, as below) for 1,000,000 ÷ rate seconds. This line is what makes a quiet room dear per message.`,
    `Coalescing applies to the busy rate only (a room is coalesced past \`REALTIME_COALESCE_THRESHOLD_PER_SECOND\`, 5): each member gets ${fmt(model.coalescing.framesPerMessage, 3)} frames per message, source: ${model.coalescing.source}. \`RoomDelivery\` reads the room's list once per window (so list read units and one invocation per window, not per message) and posts the windows' frames; the sender's \`$default\` no longer posts; the room's heat writes \`coalesceUntil\` once per ${HEAT_REFRESH_SECONDS} s. Each batch frame stays under 32 KB, one API Gateway message.`,
    "Lambda durations are this machine's handler wall time against DynamoDB Local (about a millisecond a request; a few on AWS), so the Lambda line runs somewhat low; it stays small either way. Lambda invocations of the stream consumers are counted one message at a time; at the busy rate a stream batch carries several, so that line is an upper bound there.",
  ];
  return `### Cost per million messages

${inputs.map((line) => `- ${line}`).join('\n')}

${table(['Room', 'Rate', 'Coalesced', 'API Gateway messages / msg', 'Lambda invocations / GB-ms per msg', 'WU / RU per msg', 'SQS requests / SNS publishes per msg', ...lines, 'Total per million messages'], body)}

Idle, no traffic: ${idleText}
`;
}
